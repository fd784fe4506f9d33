import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteReadRunner } from '../../src/storage/sqlite/sqlite-runner.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('SQLite reads of one event-loop turn', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'countersign-snapshot-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('share one read transaction on the writer, ended with the turn', async () => {
    const path = join(dir, 'db.sqlite');
    const writer = new Database(path);
    writer.pragma('journal_mode = WAL');
    writer.exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('a')");
    const reader = new Database(path, { readonly: true });
    const other = new Database(path);
    try {
      const runner = createSqliteReadRunner(writer, reader, () => null);
      const first = runner.all<{ v: string }>('SELECT v FROM t');
      expect(writer.inTransaction).toBe(true);
      // A commit made meanwhile on another connection is not seen before the turn ends: both
      // reads are in one transaction, not one each.
      other.exec("INSERT INTO t VALUES ('b')");
      const second = runner.all<{ v: string }>('SELECT v FROM t');
      expect(await first).toEqual([{ v: 'a' }]);
      expect(await second).toEqual([{ v: 'a' }]);
      await nextTurn();
      expect(writer.inTransaction).toBe(false);
      expect(await runner.all('SELECT v FROM t')).toEqual([{ v: 'a' }, { v: 'b' }]);
      // Ended on demand too, as the write queue does before it begins.
      runner.endSnapshot();
      expect(writer.inTransaction).toBe(false);
    } finally {
      other.close();
      reader.close();
      writer.close();
    }
  });

  it('never hold back a write queued in the same turn, and see it once it has committed', async () => {
    const store = openSqliteStore(join(dir, 'countersign.db'), { synchronous: 'full' });
    try {
      const node = { id: 'n1', version: '1', started_at: 1, last_seen: 2 };
      // The write's batch is scheduled before the turn's first read opens its transaction.
      const written = store.nodes.beat(node);
      const during = store.nodes.live(0);
      await written;
      expect(await during).toEqual([]);
      expect(await store.nodes.live(0)).toEqual([node]);
    } finally {
      await store.close();
    }
  });
});
