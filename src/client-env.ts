/**
 * The environment variables the CLI's client commands read. Kept apart from config.ts (the
 * daemon's settings) so a client command starts without loading the config schema; config.ts
 * re-exports it and counts these names as known when it checks for misspelt variables.
 */
export const CLIENT_ENV_KEYS = ['COUNTERSIGN_URL', 'COUNTERSIGN_TOKEN', 'COUNTERSIGN_ADMIN_TOKEN', 'COUNTERSIGN_DATA_DIR', 'COUNTERSIGN_PORT'] as const;

export interface ClientEnv {
  url: string | undefined;
  token: string | undefined;
  dataDir: string | undefined;
  /** The daemon's own port setting: without a URL, the CLI dials it on this machine. */
  port: string | undefined;
}

/** Settings the CLI client reads (`--url` and `--token` win over these). */
export function clientEnv(env: Readonly<Record<string, string | undefined>> = process.env): ClientEnv {
  // An empty variable counts as unset (for the daemon's own keys it means null; see config.ts).
  const get = (name: (typeof CLIENT_ENV_KEYS)[number]) => env[name]?.trim() || undefined;
  return {
    url: get('COUNTERSIGN_URL'),
    token: get('COUNTERSIGN_TOKEN') ?? get('COUNTERSIGN_ADMIN_TOKEN'),
    dataDir: get('COUNTERSIGN_DATA_DIR'),
    port: get('COUNTERSIGN_PORT'),
  };
}
