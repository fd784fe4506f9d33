import closeWithGrace from 'close-with-grace';
import { ConfigError, loadConfig } from '../config.js';
import { ensureWritableDataDir } from '../data-dir.js';
import { MigrationError } from '../storage/migrations.js';
import { startServer } from '../server.js';
import type { CliContext } from './cli-context.js';
import { expectPositionals, parseCommandArgs } from './command-args.js';
import { EXIT_ERROR } from './exit-codes.js';

/** `countersign serve [--config FILE]`. */
export async function serveCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('serve', args, { config: { type: 'string' } });
  expectPositionals('serve', positionals, []);
  return serve(ctx, { config: values.config });
}

/**
 * Loads and validates the config, checks the data directory, migrates, listens, prints where
 * the inbox is (and the admin token, only when this start generated it) on stderr, then runs
 * until SIGTERM/SIGINT.
 * Any problem before listening is one message and exit code 4.
 */
export async function serve(ctx: CliContext, opts: { config?: string | undefined }): Promise<number> {
  let server;
  try {
    const config = loadConfig({ file: opts.config });
    ensureWritableDataDir(config.data_dir);
    server = await startServer(config);
    // Callbacks exist only for allowlisted hosts: without an allowlist there is nothing to sign.
    if (config.callbacks.allowlist.length > 0 && !config.callbacks.secret) {
      server.deps.log.warn('callbacks.secret is not set: callbacks will be delivered unsigned');
    }
  } catch (err) {
    if (err instanceof ConfigError || err instanceof MigrationError) {
      ctx.err(`countersign: ${err.message}\n`);
      return EXIT_ERROR;
    }
    ctx.err(`countersign: cannot start: ${(err as Error).message}\n`);
    return EXIT_ERROR;
  }
  // One write, so whoever watches for the "listening" line also has the rest. On stderr:
  // stdout carries log lines only (JSON unless log.format is pretty), for log collectors.
  let banner = `countersign ${server.deps.version} listening on ${server.url}\ninbox: ${server.url}/\n`;
  if (server.adminTokenGenerated) {
    banner += `admin token (shown once; also in ${server.deps.config.data_dir}/admin-token): ${server.adminToken}\n`;
  }
  ctx.err(banner);
  const s = server;
  await new Promise<void>((resolve) => {
    closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
      if (err) s.deps.log.error({ err }, 'shutting down after an error');
      else s.deps.log.info({ signal }, 'shutting down');
      await s.close();
      resolve();
    });
  });
  return 0;
}
