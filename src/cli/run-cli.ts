import { parseArgs } from 'node:util';
import { serve } from './serve.js';

const USAGE = `usage: countersign <command> [options]

  serve [--config FILE]        run the daemon
`;

export async function runCli(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      const { values } = parseArgs({ args: rest, options: { config: { type: 'string' } }, strict: true });
      return serve({ config: values.config });
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return command === undefined ? 4 : 0;
    default:
      process.stderr.write(`countersign: unknown command "${command}"\n${USAGE}`);
      return 4;
  }
}
