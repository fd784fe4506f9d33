import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveAdminToken } from '../../src/auth/admin-token.js';

describe('the admin-token file', () => {
  const dirs: string[] = [];
  const dirWith = (content: string) => {
    const d = mkdtempSync(join(tmpdir(), 'countersign-admin-token-'));
    dirs.push(d);
    writeFileSync(join(d, 'admin-token'), content, { mode: 0o600 });
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('is used as written when it is one printable ASCII word', () => {
    const dir = dirWith('csa_written-by-hand-0123456789\n');
    expect(resolveAdminToken(dir, null)).toMatchObject({ token: 'csa_written-by-hand-0123456789', generated: false });
  });

  it.each(['correct horse battery staple', 'pässwört-0123456789abcdef'])(
    'stops the start when no Authorization header could carry it (%s), keeping the file and never showing it',
    (secret) => {
      const dir = dirWith(`${secret}\n`);
      let thrown: unknown;
      try {
        resolveAdminToken(dir, null);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(Error);
      expect((thrown as Error).message).toContain(join(dir, 'admin-token'));
      expect((thrown as Error).message).not.toContain(secret);
      expect(readFileSync(join(dir, 'admin-token'), 'utf8')).toBe(`${secret}\n`);
    },
  );

  it('stops the start when it is shorter than 16 characters, keeping the file and never showing it', () => {
    const dir = dirWith('hunter2\n');
    expect(() => resolveAdminToken(dir, null)).toThrow(/shorter than 16 characters/);
    expect(() => resolveAdminToken(dir, null)).not.toThrow(/hunter2/);
    expect(readFileSync(join(dir, 'admin-token'), 'utf8')).toBe('hunter2\n');
  });

  it('is generated when the file is empty', () => {
    const dir = dirWith('\n');
    const resolved = resolveAdminToken(dir, null);
    expect(resolved).toMatchObject({ generated: true });
    expect(resolved.token).toMatch(/^csa_/);
    expect(readFileSync(join(dir, 'admin-token'), 'utf8')).toBe(`${resolved.token}\n`);
  });

  it('is not read when admin_token is set', () => {
    const dir = dirWith('correct horse battery staple\n');
    expect(resolveAdminToken(dir, 'configured-admin-token-0123456789').token).toBe('configured-admin-token-0123456789');
  });
});
