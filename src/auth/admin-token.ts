import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BEARER_SECRET_CHARS, MIN_BEARER_SECRET_LENGTH, newSecret } from './secrets.js';

/**
 * The admin token: `COUNTERSIGN_ADMIN_TOKEN` (config `admin_token`) when set, else the one in
 * `<data dir>/admin-token`, generated with mode 0600 on first start (or when the file is empty).
 * `generated` tells the caller to print it once.
 */
export function resolveAdminToken(dataDir: string, configured: string | null): { token: string; generated: boolean; file: string | null } {
  if (configured) return { token: configured, generated: false, file: null };
  const file = join(dataDir, 'admin-token');
  if (existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    // As for admin_token: a secret no Authorization header can carry would lock every client out.
    if (!BEARER_SECRET_CHARS.test(token)) {
      throw new Error(
        `the admin token in ${file} must be printable ASCII without spaces (it is sent as Authorization: Bearer <token>): replace it with a long random secret (e.g. openssl rand -base64 32), or delete the file to have one generated`,
      );
    }
    if (token.length > 0) {
      // As for admin_token too: a short one is refused, never replaced behind the writer's back.
      if (token.length < MIN_BEARER_SECRET_LENGTH) {
        throw new Error(
          `the admin token in ${file} is shorter than ${MIN_BEARER_SECRET_LENGTH} characters: replace it with a long random secret, or delete the file to have one generated`,
        );
      }
      chmodSync(file, 0o600);
      return { token, generated: false, file };
    }
  }
  // No file, or an empty one: a new token.
  const token = newSecret('csa_');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { token, generated: true, file };
}
