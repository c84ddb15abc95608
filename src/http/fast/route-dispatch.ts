/**
 * Dispatch of the declared operations (src/api/routes) by a lookup on method and path, in one
 * middleware: a request to the API finds its operation among the few of its method and number of
 * path segments, instead of walking a stack of routers and their layers. Matching is Express's:
 * without case, one trailing slash allowed, parameters percent-decoded (a bad encoding is the
 * client's 400), a GET operation answers HEAD when the path has no HEAD operation, and among
 * operations that match, literal segments win over parameters. A request that matches nothing
 * goes on to the next middleware.
 *
 * The middleware every request runs first (request id and log, security headers, the database
 * watchdog: `front`) is part of each operation's chain, worked out once: a request to an
 * operation goes through one precomputed list instead of Express's walk over those layers. A
 * request that matches nothing goes on to the app's own copies of them.
 *
 * A fast path (./README.md): with FAST_PATHS=off the app routes the same operations through
 * Express's router instead (`operationRouter` in src/app.ts), after its one copy of `front`.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { API_PREFIX, type NamedRoute } from '../../api/route';
import '../types';

interface Compiled {
  route: NamedRoute;
  /** Lower-cased literal segments; null where a parameter goes. */
  segments: Array<string | null>;
  names: string[];
  chain: RequestHandler[];
}

/** Runs middleware in order, like a route's stack: an error or the end goes to `done`. */
function run(chain: RequestHandler[], req: Request, res: Response, done: NextFunction): void {
  let i = 0;
  const next = (err?: unknown): void => {
    if (err !== undefined && err !== null) return done(err);
    const fn = chain[i++];
    if (!fn) return done();
    try {
      const ret: unknown = fn(req, res, next);
      if (ret instanceof Promise) ret.then(undefined, (e: unknown) => next(e ?? new Error('handler rejected')));
    } catch (e) {
      next(e);
    }
  };
  next();
}

/** More literal segments earlier first, then the operation of the exact method before GET-for-HEAD, then declaration order. */
function precedence(a: Compiled, b: Compiled, method: string): number {
  for (let i = 0; i < a.segments.length; i++) {
    const la = a.segments[i] !== null;
    const lb = b.segments[i] !== null;
    if (la !== lb) return la ? -1 : 1;
  }
  const ea = a.route.method === method;
  const eb = b.route.method === method;
  return ea === eb ? 0 : ea ? -1 : 1;
}

/**
 * The middleware dispatching `entries` (mounted at the app's root). It sets `req.params` and
 * `req.apiRoute` and runs the operation's chain (its middleware, then its handler).
 */
export function routeDispatch(entries: Array<{ route: NamedRoute; chain: RequestHandler[] }>, front: RequestHandler[] = []): RequestHandler {
  const compiled: Compiled[] = entries.map(({ route, chain }) => {
    const parts = route.path.split('/').slice(1);
    return {
      route,
      chain: [...front, ...chain],
      segments: parts.map((p) => (p.startsWith('{') ? null : p.toLowerCase())),
      names: parts.filter((p) => p.startsWith('{')).map((p) => p.slice(1, -1)),
    };
  });
  // METHOD → number of segments → candidates in order of precedence.
  const table = new Map<string, Map<number, Compiled[]>>();
  for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']) {
    const bySize = new Map<number, Compiled[]>();
    compiled
      .filter((c) => c.route.method.toUpperCase() === method || (method === 'HEAD' && c.route.method === 'get'))
      .forEach((c) => bySize.set(c.segments.length, [...(bySize.get(c.segments.length) ?? []), c]));
    for (const list of bySize.values()) list.sort((a, b) => precedence(a, b, method.toLowerCase()));
    table.set(method, bySize);
  }
  const prefix = API_PREFIX.toLowerCase();

  return (req: Request, res: Response, next: NextFunction) => {
    const bySize = table.get(req.method);
    const path = req.path;
    if (!bySize || path.length <= prefix.length || path[prefix.length] !== '/' || path.slice(0, prefix.length).toLowerCase() !== prefix) return next();
    const parts = path.slice(prefix.length + 1).split('/');
    if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop(); // one trailing slash
    const candidates = bySize.get(parts.length);
    if (!candidates) return next();
    const lower = parts.map((p) => p.toLowerCase());
    for (const c of candidates) {
      let match = true;
      for (let i = 0; i < lower.length; i++) {
        const s = c.segments[i];
        if (s === null ? parts[i] === '' : s !== lower[i]) {
          match = false;
          break;
        }
      }
      if (!match) continue;
      const params: Record<string, string> = {};
      try {
        let k = 0;
        for (let i = 0; i < parts.length; i++) if (c.segments[i] === null) params[c.names[k++]] = decodeURIComponent(parts[i]);
      } catch (err) {
        // The client's bad encoding, answered like any request's error: after the front middleware.
        return run([...front, (_rq, _rs, fail) => fail(err)], req, res, next);
      }
      req.params = params;
      req.apiRoute = c.route;
      return run(c.chain, req, res, next);
    }
    next();
  };
}
