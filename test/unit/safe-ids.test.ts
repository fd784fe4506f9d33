import { describe, expect, it } from 'vitest';
import { byNativeId, nativeIdOf, recordIdOf, safeIds, withNativeIds } from '../../src/adapters/adapter-kit.js';
import { SAFE_ID } from '../../src/requests/request-schema.js';

describe('safe ids for native question and option ids', () => {
  it('keeps ids that pass exactly as they are, with no map', () => {
    expect(safeIds(['target', 'q-2', 'a.b:c_d', 'constructor'], 'question')).toEqual({ ids: ['target', 'q-2', 'a.b:c_d', 'constructor'], map: undefined });
    expect(safeIds([], 'option')).toEqual({ ids: [], map: undefined });
  });

  it('gives any other id q1, q2, … (o1, … for options), skipping the frame own ids, and maps them back', () => {
    const long = 'x'.repeat(65);
    const { ids, map } = safeIds(['deploy/target', 'q1', '部署区域', long, 'q3'], 'question');
    expect(ids).toEqual(['q2', 'q1', 'q4', 'q5', 'q3']);
    expect(map).toEqual({ q2: 'deploy/target', q4: '部署区域', q5: long });
    for (const id of ids) expect(id).toMatch(SAFE_ID);
    expect(safeIds(['allow once', 'deny', 'allow"onclick="x'], 'option')).toEqual({
      ids: ['o1', 'deny', 'o2'],
      map: { o1: 'allow once', o2: 'allow"onclick="x' },
    });
  });

  it('gives a repeated native id one safe id, so the record refuses the repeat as it would any other', () => {
    expect(safeIds(['a b', 'a b'], 'question').ids).toEqual(['q1', 'q1']);
  });

  it('replaces "__proto__" as a question id (it could never be answered), not as an option id', () => {
    expect(safeIds(['__proto__'], 'question')).toEqual({ ids: ['q1'], map: { q1: '__proto__' } });
    expect(safeIds(['__proto__'], 'option')).toEqual({ ids: ['__proto__'], map: undefined });
  });

  it('leads both ways through the map, and without one every id is itself (records made before ids were mapped)', () => {
    const { map } = safeIds(['deploy/target', 'toString'], 'question');
    expect(nativeIdOf(map, 'q1')).toBe('deploy/target');
    expect(recordIdOf(map, 'deploy/target')).toBe('q1');
    // Own keys only: an id named like an Object.prototype member is itself.
    for (const id of ['toString', 'constructor', '__proto__']) {
      expect(nativeIdOf(map, id)).toBe(id);
      expect(recordIdOf(map, id)).toBe(id);
      expect(nativeIdOf(undefined, id)).toBe(id);
      expect(recordIdOf(undefined, id)).toBe(id);
    }
  });

  it('adds nativeIds to a context only when an id was replaced, so other contexts stay as they were', () => {
    expect(withNativeIds({ questions: undefined, options: undefined })).toEqual({});
    expect(withNativeIds({ questions: { q1: 'a b' } })).toEqual({ nativeIds: { questions: { q1: 'a b' } } });
  });

  it('keys a reply by native ids as own keys, "__proto__" included, as JSON sends them', () => {
    const out = byNativeId([
      ['__proto__', 1],
      ['deploy/target', 2],
    ]);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(out))).toEqual(out);
    expect(JSON.stringify(out)).toBe('{"__proto__":1,"deploy/target":2}');
  });
});
