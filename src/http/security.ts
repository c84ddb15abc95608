import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import type { Config } from '../config';
import { invalid } from '../errors';
import { isGraphqlRequest } from './graphql-path';

/** Headers a browser client may read on cross-origin responses. */
const EXPOSED_HEADERS = [
  'ETag',
  'Last-Modified',
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'X-Markdown-Size',
  'X-Raw-Data-Size',
  'X-Session-Data-Size',
  'Idempotent-Replayed',
];

/** JSON API responses: nothing may load, nothing may frame them. */
const apiHeaders = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] },
  },
  crossOriginResourcePolicy: { policy: 'same-origin' },
  referrerPolicy: { policy: 'no-referrer' },
});

/**
 * The GraphQL playground page (GET /api/v1/graphql, text/html) and its assets (the Vite build of
 * web/playground): scripts and Monaco's web workers from this origin only (no inline script, no
 * blob: worker); styles from this origin plus inline ones (Monaco and GraphiQL set style
 * attributes and add <style> elements); fonts and images also as data: URLs (GraphiQL's icon
 * fonts are inlined in its stylesheet). Only on this path.
 */
const playgroundHeaders = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      workerSrc: ["'self'"],
      objectSrc: ["'none'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
    },
  },
  crossOriginResourcePolicy: { policy: 'same-origin' },
  crossOriginEmbedderPolicy: false,
  referrerPolicy: { policy: 'no-referrer' },
});

/**
 * Helmet's headers for one of the sets above, worked out once: they depend on nothing in the
 * request, and running helmet's dozen middlewares for every response cost more than the
 * headers themselves. The same calls, replayed in the same order.
 */
function recorded(middleware: RequestHandler): Array<[name: string, value: string | number | readonly string[] | null]> {
  const calls: Array<[name: string, value: string | number | readonly string[] | null]> = [];
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => void calls.push([name, value]),
    removeHeader: (name: string) => void calls.push([name, null]),
  };
  let done = false;
  middleware({ method: 'GET', headers: {} } as Request, recorder as unknown as Response, (err?: unknown) => {
    if (err) throw err instanceof Error ? err : new Error('security headers: helmet failed');
    done = true;
  });
  if (!done) throw new Error('security headers: helmet did not finish synchronously');
  return calls;
}
function precomputed(middleware: RequestHandler): RequestHandler {
  const calls = recorded(middleware);
  return (_req, res, next) => {
    for (const [name, value] of calls) {
      if (value === null) res.removeHeader(name);
      else res.setHeader(name, value);
    }
    next();
  };
}
const apiHeadersOnce = precomputed(apiHeaders);
/** The security headers of a JSON API response, as [name, value] (bench/baseline-server.ts sends the same). */
export const API_SECURITY_HEADERS = recorded(apiHeaders).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value] as const] : []));
const playgroundHeadersOnce = precomputed(playgroundHeaders);

const isPlaygroundRequest = (req: Request) => (req.method === 'GET' || req.method === 'HEAD') && isGraphqlRequest(req);

/** Security headers (helmet) on every response, and CORS for the configured origins only. */
export function securityHeaders(config: Config): RequestHandler[] {
  const allowed = new Set(config.corsOrigins);
  const corsHandler = cors({
    origin: (origin, cb) => cb(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: [
      'Authorization',
      'Content-Type',
      'Content-Encoding',
      'If-Match',
      'If-None-Match',
      'X-Request-Id',
      'Accept',
      'Idempotency-Key',
      'graphql-client-name',
      'apollographql-client-name',
    ],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
  const headers = (req: Request, res: Response, next: NextFunction) => (isPlaygroundRequest(req) ? playgroundHeadersOnce : apiHeadersOnce)(req, res, next);
  // Without an Origin header the origin callback says no and cors adds nothing: no need to run it.
  const corsWhenOrigin = (req: Request, res: Response, next: NextFunction) => (req.headers.origin === undefined ? next() : corsHandler(req, res, next));
  return [headers, corsWhenOrigin];
}

/**
 * A path whose percent-encoding does not decode (e.g. `/api/v1/projects/%E0%A4%A`): the router
 * throws a URIError while matching parameters; that is the client's mistake (400), not a 500.
 */
export function malformedUrl(err: unknown, _req: Request, _res: Response, next: NextFunction): void {
  if (err instanceof URIError || (err as { name?: string } | null)?.name === 'URIError') {
    next(invalid('Malformed URL encoding'));
    return;
  }
  next(err);
}
