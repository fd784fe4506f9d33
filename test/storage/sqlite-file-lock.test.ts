import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claimSqliteFile, SqliteFileTakenError } from '../../src/storage/sqlite/sqlite-file-lock.js';

describe('claimSqliteFile', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('holds one claim per database file, leaves only the lock file beside it, and frees it on release', () => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-lock-'));
    const db = join(dir, 'countersign.db');
    const claim = claimSqliteFile(db);
    expect(() => claimSqliteFile(db)).toThrow(SqliteFileTakenError);
    // No journal beside the lock: a file left by a crash could not be opened by another user.
    expect(readdirSync(dir)).toEqual(['countersign.db.lock']);
    claim.release();
    claimSqliteFile(db).release();
    expect(readdirSync(dir)).toEqual(['countersign.db.lock']);
  });
});
