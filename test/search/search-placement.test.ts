/** Placement of owning scopes on engines (src/search/engine/placement.ts): stable, even, and minimal moves. */
import crypto from 'node:crypto';
import { engineOf, scopesByEngine } from '../../src/search/engine/placement';

const scopes = Array.from({ length: 6000 }, (_, i) => (i % 2 ? crypto.randomUUID() : `team-${i}`));

test('one engine holds everything', () => {
  expect(new Set(scopes.map((s) => engineOf(s, 1)))).toEqual(new Set([0]));
  expect(engineOf('anyone', 0)).toBe(0);
});

test('the same scope lands on the same engine, every time and for fixed ids', () => {
  for (const s of scopes.slice(0, 200)) expect(engineOf(s, 3)).toBe(engineOf(s, 3));
  // Fixed expectations: a change of the hash would move every scope (and needs a reindex).
  expect(['user-a', 'team-x', 'u1', 'u2', 'u4'].map((s) => [engineOf(s, 2), engineOf(s, 3)])).toEqual([
    [1, 1],
    [1, 1],
    [0, 0],
    [1, 2],
    [1, 2],
  ]);
});

test('scopes spread about evenly', () => {
  for (const n of [2, 3, 4]) {
    const counts = new Array<number>(n).fill(0);
    for (const s of scopes) counts[engineOf(s, n)]++;
    for (const c of counts) expect(Math.abs(c - scopes.length / n)).toBeLessThan(scopes.length / n / 5);
  }
});

test('appending an engine moves only the scopes it takes (about 1/N), none between the others', () => {
  for (const n of [1, 2, 3]) {
    let moved = 0;
    for (const s of scopes) {
      const before = engineOf(s, n);
      const after = engineOf(s, n + 1);
      if (before !== after) {
        expect(after).toBe(n);
        moved++;
      }
    }
    const share = moved / scopes.length;
    expect(share).toBeGreaterThan(1 / (n + 1) - 0.05);
    expect(share).toBeLessThan(1 / (n + 1) + 0.05);
  }
});

test('scopesByEngine groups a caller scopes by engine', () => {
  const mine = scopes.slice(0, 12);
  const groups = scopesByEngine(mine, 3);
  expect([...groups.values()].flat().sort()).toEqual([...mine].sort());
  for (const [e, list] of groups) for (const s of list) expect(engineOf(s, 3)).toBe(e);
});
