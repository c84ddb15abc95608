/**
 * What one HTTP operation of the API is, declared once (src/api/routes.ts): its method and path,
 * its input and output schemas, who may call it, and the flags the middleware reads. Express
 * dispatch (src/http/fast/route-dispatch.ts, wired in src/app.ts), the OpenAPI document
 * (src/api/openapi.ts), route names in logs and metrics, admission, the body parser,
 * Idempotency-Key and read-only keys all read these declarations; nothing re-derives a route
 * from its path. A door (src/rest/<resource>.ts) supplies the handler of each operation, by name,
 * and the compiler checks what it returns against the operation's response schema.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { ZodObject, ZodType, z } from 'zod';
import type { ErrorStatus, HeaderName } from './schemas/common';

/** Where every operation's path starts. */
export const API_PREFIX = '/api/v1';

/**
 * Who may call an operation.
 * - `key`: an API key, a device access token or a browser session (cookie + CSRF on writes);
 *   authentication, the per-user REST rate limit, read-only keys, admission and the body parser,
 *   and Idempotency-Key run before the handler.
 * - `cookie`: only the browser session's cookie, read by the handler itself.
 * - `refresh`: a device refresh token in `Authorization`, checked by the handler.
 * - `none`: public; the handler spends from the address's budgets and reads its (small) body.
 */
type Auth = 'key' | 'cookie' | 'refresh' | 'none';

/**
 * The limit a request of this operation spends from:
 * `rest` / `graphql` per user (after authentication); `share_reads` per address (before the
 * handler); `anonymous` per address, spent by the handler itself (after its origin check).
 */
type RouteRateLimit = 'rest' | 'graphql' | 'share_reads' | 'anonymous' | 'none';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head';

interface SuccessResponse {
  description: string;
  /** JSON body schema; or `content` for other media types; neither → no body. */
  schema?: ZodType;
  content?: Record<string, ZodType>;
  /** Response headers this status sends (components of HEADERS). */
  headers?: HeaderName[];
  /** Of those, the ones that are always present. */
  requiredHeaders?: HeaderName[];
}

export interface Route<P extends string = string, Rs extends Record<number, SuccessResponse> = Record<number, SuccessResponse>> {
  method: Method;
  /** OpenAPI path below /api/v1, e.g. `/projects/{projectId}`. */
  path: P;
  tag: string;
  summary: string;
  description?: string;
  auth: Auth;
  params?: ZodObject;
  query?: ZodObject;
  headers?: ZodObject;
  /** JSON request body. */
  body?: ZodType;
  /** The body may be left out. */
  bodyOptional?: boolean;
  /**
   * A request body of another media type (e.g. a tar), read by the handler as a stream: admission
   * still applies, the JSON parser and Idempotency-Key do not.
   */
  rawBody?: { mediaType: string; description: string };
  /**
   * Documents that a repeat with the same `Idempotency-Key` replays the first answer (the header,
   * 409 and 422). The middleware takes the key on every `key` POST/PUT with a JSON body; answers that
   * carry a freshly minted secret are never kept, so those operations do not document it.
   */
  idempotent?: boolean;
  /** A session upload: its body is parsed, validated, redacted and hashed on a worker thread when large. */
  upload?: boolean;
  /** A POST that only reads (the upload CLI's resume search): open to read-only keys. */
  reads?: boolean;
  /** Defaults: `rest` for `key`, `none` otherwise. */
  rateLimit?: RouteRateLimit;
  /** The handler writes the response itself (streams, HEAD, content negotiation) and returns nothing. */
  streams?: boolean;
  responses: Rs;
  /** Errors besides those every operation of its kind can answer. */
  errors?: ErrorStatus[];
  /** No error body (HEAD). */
  bodyless?: boolean;
  /** The body of an error, when it is not the REST envelope (GraphQL's `{errors}`). */
  errorSchema?: ZodType;
}

/** A declaration, its literal path and responses kept for the handler's types. */
export const defineRoute = <const P extends string, const Rs extends Record<number, SuccessResponse>, const S extends boolean = false>(
  route: Route<P, Rs> & { streams?: S },
): Route<P, Rs> & { streams?: S } => route;

/** A declared operation with its name (its key in the table). */
export type NamedRoute = Route & { id: string };

/** `/projects/{projectId}` → `/api/v1/projects/:projectId` (the route name in logs and metrics). */
const routeNames = new WeakMap<Route, string>();
export const routeName = (route: Route): string => {
  let name = routeNames.get(route);
  if (name === undefined) routeNames.set(route, (name = API_PREFIX + route.path.replace(/\{(\w+)\}/g, ':$1')));
  return name;
};

export const rateLimitOf = (route: Route): RouteRateLimit => route.rateLimit ?? (route.auth === 'key' ? 'rest' : 'none');

// ---- Types of handlers (the doors implement them) ----

type ParamNames<P extends string> = P extends `${string}{${infer K}}${infer Rest}` ? K | ParamNames<Rest> : never;
/** `{projectId: string}` of `/projects/{projectId}`. */
type ParamsOf<P extends string> = { [K in ParamNames<P>]: string };

/**
 * A value `res.json` turns into `T`: a Date where a string is expected (its ISO form). Strings are
 * checked as strings (an enum's values are the schema's and the service's business, not the door's),
 * and the named fields of an object (a catch-all for extra keys is not checked).
 */
type Sendable<T> = T extends string
  ? string | Date
  : T extends readonly (infer E)[]
    ? readonly Sendable<E>[]
    : T extends Date
      ? T
      : T extends object
        ? { [K in keyof T as string extends K ? never : K]: Sendable<T[K]> }
        : T;

/** The JSON bodies an operation's success responses declare. */
type JsonOf<R> =
  R extends Route<string, infer Rs> ? { [K in keyof Rs]: Rs[K] extends { schema: infer S extends ZodType } ? Sendable<z.input<S>> : never }[keyof Rs] : never;

type RequestOf<R> = R extends Route<infer P> ? Request<ParamsOf<P>> : Request;

/**
 * A handler: returns the JSON body of a success (sent with the route's status, or the one the
 * handler set), or, for a `streams` route, writes the response itself.
 */
export type Handler<R> = R extends { streams?: true }
  ? (req: RequestOf<R>, res: Response) => Promise<void> | void
  : (req: RequestOf<R>, res: Response) => Promise<JsonOf<R>> | JsonOf<R>;

/** A handler with middleware of the door's own before it (e.g. a share link's headers). */
export interface HandlerWith<R> {
  use: RequestHandler[];
  handle: Handler<R>;
}

/** One handler per operation of a table, by name. */
export type Handlers<T> = { [K in keyof T]: Handler<T[K]> | HandlerWith<T[K]> };
