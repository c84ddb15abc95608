/**
 * The per-request structures kept out of V8's slow paths: the database watchdog's list of
 * requests in flight (an array with swap-remove, not a Set) and the request's context (a class
 * with its logger getter on the prototype, not a literal). With the Set and the literal, each
 * young-generation collection under REST load found ~4.5 MB still alive instead of ~0.5 MB, and
 * `recent` cost ~300 µs of CPU per request instead of ~235 (docs/benchmarks.md, "REST reads").
 */
import type { Request, Response } from 'express';
import { InFlight, type Watched } from '../../src/http/db-watchdog';
import { ctxOf } from '../../src/http/request-context';
import { createLogger } from '../../src/logger';
import type { Deps } from '../../src/services/context';
import { withReads } from '../../src/services/context';
import { WorkGuard } from '../../src/services/work-guard';
import type { Sql } from '../../src/data/sql';

const entry = (n: number): Watched => ({ req: { n } as unknown as Request, res: {} as Response, guard: new WorkGuard(), slot: -1 });

describe('InFlight', () => {
  it('holds what was added and not yet removed, whatever the order of removals', () => {
    const list = new InFlight();
    const entries = Array.from({ length: 6 }, (_, i) => entry(i));
    for (const e of entries) list.add(e);
    list.delete(entries[1]);
    list.delete(entries[5]);
    list.delete(entries[0]);
    expect(list.size).toBe(3);
    expect(new Set(list.list())).toEqual(new Set([entries[2], entries[3], entries[4]]));
    // Every entry still in knows its place: removing the rest empties the list.
    for (const e of [entries[3], entries[2], entries[4]]) list.delete(e);
    expect(list.size).toBe(0);
    expect(entries.every((e) => e.slot === -1)).toBe(true);
  });

  it('ignores a second removal and gives a copy to iterate while entries leave', () => {
    const list = new InFlight();
    const [a, b] = [entry(1), entry(2)];
    list.add(a);
    list.add(b);
    list.delete(a);
    list.delete(a);
    expect(list.list()).toEqual([b]);
    const seen: Watched[] = [];
    for (const w of list.list()) {
      seen.push(w);
      list.delete(w);
    }
    expect(seen).toEqual([b]);
    expect(list.size).toBe(0);
  });
});

describe('ctxOf', () => {
  it('gives a context whose logger carries the request id, also through withReads', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (s: string) => void lines.push(s) });
    const deps = { logger, db: { reads: null, replica: null } } as unknown as Deps;
    const req = { user: { id: 'u1', keyId: 'k1', role: 'user' }, id: 'req-42', guard: new WorkGuard() } as unknown as Request;
    const ctx = ctxOf(req, deps);
    expect(ctx.user.id).toBe('u1');
    expect(ctx.guard).toBe(req.guard);
    const derived = withReads(ctx, { isSql: true } as unknown as Sql);
    derived.log.info({ msg: 'through a snapshot' });
    ctx.log.info({ msg: 'directly' });
    expect(lines.map((l) => JSON.parse(l).reqId)).toEqual(['req-42', 'req-42']);
    expect(derived.user).toBe(ctx.user);
  });
});
