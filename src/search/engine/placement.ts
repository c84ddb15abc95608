/**
 * Which engine holds an owning scope (a user's id or a team's id): rendezvous (highest random
 * weight) hashing. Every engine draws a weight for the scope from a hash of (engine position,
 * scope id); the highest wins. The placement depends only on the scope id and the engines'
 * positions in MEILI_URLS, so it is the same in every process; appending an engine moves only
 * the scopes it now wins (about 1/N of them) and no scope moves between the engines already
 * there (`hash % N` would move most of them).
 */
import { createHash } from 'node:crypto';

/** The scope's weight on the engine at `position` (the first 48 bits of a SHA-256). */
function weight(position: number, scopeId: string): number {
  return createHash('sha256').update(`${position}\u0000${scopeId}`).digest().readUIntBE(0, 6);
}

/** The position (0-based, MEILI_URLS order) of the engine that holds `scopeId`, among `engines`. */
export function engineOf(scopeId: string, engines: number): number {
  if (engines <= 1) return 0;
  let best = 0;
  let bestWeight = -1;
  for (let i = 0; i < engines; i++) {
    const w = weight(i, scopeId);
    // Ties (1 in 2^48) go to the lower position.
    if (w > bestWeight) {
      best = i;
      bestWeight = w;
    }
  }
  return best;
}

/** The scopes grouped by the engine holding them: position → scopes, engines holding none left out. */
export function scopesByEngine(scopes: readonly string[], engines: number): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const s of scopes) {
    const e = engineOf(s, engines);
    const list = out.get(e) ?? [];
    list.push(s);
    out.set(e, list);
  }
  return out;
}
