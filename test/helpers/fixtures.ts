import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const FIXTURES_DIR = join(import.meta.dirname, '..', 'fixtures');

/** The golden fixtures of one wire format, as [file name, parsed case], in name order. */
export function loadFixtures(format: string): Array<[string, any]> {
  const dir = join(FIXTURES_DIR, format);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(join(dir, f), 'utf8'))]);
}

/** One golden fixture of a wire format, parsed. */
export function loadFixture(format: string, file: string): any {
  return JSON.parse(readFileSync(join(FIXTURES_DIR, format, file), 'utf8'));
}

/**
 * A PaperClip runtime permission whose only way to approve is a grant for the whole session
 * (`accept_for_session`, beside `decline`): only a person may approve it.
 */
export function sessionGrantOnlyPermission(requestId: string): any {
  return {
    ...structuredClone(loadFixture('paperclip', 'e2e-request.json').frame.payload.request),
    requestId,
    choices: [
      { key: 'accept_for_session', label: 'Allow for this session' },
      { key: 'decline', label: 'Deny' },
    ],
  };
}
