import closeWithGrace from 'close-with-grace';
import { ConfigError, loadConfig } from '../config.js';
import { MigrationError } from '../storage/migrations.js';
import { startServer } from '../server.js';

/**
 * `countersign serve`: load and validate the config, migrate, listen, print where the inbox
 * is (and the admin token, the first time only), then run until SIGTERM/SIGINT.
 */
export async function serve(opts: { config?: string | undefined }): Promise<number> {
  let server;
  try {
    const config = loadConfig({ file: opts.config });
    server = await startServer(config);
    if (!config.callbacks.secret) {
      server.deps.log.warn('callbacks.secret is not set: callbacks will be delivered unsigned');
    }
    if (config.admin_token && config.admin_token.length < 16) {
      server.deps.log.warn('the admin token is shorter than 16 characters: use a long random secret');
    }
  } catch (err) {
    if (err instanceof ConfigError || err instanceof MigrationError) {
      process.stderr.write(`countersign: ${err.message}\n`);
      return 4;
    }
    process.stderr.write(`countersign: cannot start: ${(err as Error).message}\n`);
    return 4;
  }
  // One write, so whoever watches for the "listening" line also has the rest.
  let banner = `countersign ${server.deps.version} listening on ${server.url}\ninbox: ${server.url}/\n`;
  if (server.adminTokenGenerated) {
    banner += `admin token (shown once; also in ${server.deps.config.data_dir}/admin-token): ${server.adminToken}\n`;
  }
  process.stdout.write(banner);
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
