/**
 * One REST operation described in a few lines: `describe(registry, {...})` turns it into an
 * OpenAPI path item with the standard error responses, the error envelope, the rate-limit
 * headers and the security requirement of its kind of authentication.
 */
import type { OpenAPIRegistry, ResponseConfig, RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { ZodObject, ZodType } from 'zod';
import { ERROR_STATUSES, ErrorEnvelope, HEADERS, type ErrorStatus, type HeaderName, z } from '../../api/schemas/common';

/** `key`: an API key, device access token or browser session; `none`: public; `refresh`: a device refresh token. */
export type Auth = 'key' | 'none' | 'refresh';

export interface SuccessResponse {
  description: string;
  /** JSON body schema; or `content` for other media types; neither → no body. */
  schema?: ZodType;
  content?: Record<string, ZodType>;
  /** Response headers this status sends (components of HEADERS). */
  headers?: HeaderName[];
  /** Of those, the ones that are always present. */
  requiredHeaders?: HeaderName[];
}

export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head';
  /** OpenAPI path below /api/v1, e.g. `/projects/{projectId}`. */
  path: string;
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
  /** A request body of another media type (e.g. a tar), instead of `body`. */
  rawBody?: { mediaType: string; description: string };
  /** The operation honours `Idempotency-Key` (docs/upload-clients.md): adds the header and the 422. */
  idempotent?: boolean;
  responses: Record<number, SuccessResponse>;
  /** Errors besides those every operation of its kind can answer. */
  errors?: ErrorStatus[];
  /** No error body (HEAD). */
  bodyless?: boolean;
}

const RATE_LIMIT: HeaderName[] = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
const headerRef = (name: HeaderName) => ({ $ref: `#/components/headers/${name}` });

function headersOf(names: HeaderName[], required: HeaderName[] = []) {
  const out: Record<string, object> = {};
  for (const n of names) out[n] = headerRef(n);
  // A reference cannot carry `required`: headers that are always sent are written out in full.
  for (const n of required) out[n] = { ...HEADERS[n], required: true };
  return out;
}

const IdempotencyKey = z.object({
  'Idempotency-Key': z.string().min(1).optional().openapi({
    description:
      'Repeating this request with the same key (1–255 visible ASCII characters) within 24 hours returns the first response (status, body, `ETag`; marked `Idempotent-Replayed: true`) without acting again; a repeat that arrives while the first is running waits for it. A key is scoped to (user, method, path): the same key on another method or path is another key; the same key, method and path with another body or query → 422. A 5xx answer frees the key; an answer over 1 MiB, or one that carries a freshly issued credential or one-time link, is never kept (a repeat acts again).',
  }),
});

export function describe(registry: OpenAPIRegistry, op: Operation): void {
  const authenticated = op.auth !== 'none';
  // Any request can be malformed (a path that does not decode, a bad query) → 400.
  // A cookie-authenticated write without the session's CSRF token (or from a foreign Origin) → 403 (the CSRF rule);
  // any write made with a read-only key → 403 `This key is read-only`.
  const csrf: ErrorStatus[] = op.auth === 'key' && op.method !== 'get' && op.method !== 'head' ? [403] : [];
  const common: ErrorStatus[] = op.auth === 'none' ? [400, 500, 503] : [400, 401, 429, 500, 503, ...csrf];
  const errors = new Set<ErrorStatus>([
    ...common,
    ...(op.errors ?? []),
    ...(op.body || op.rawBody ? ([400, 408, 413, 415] as ErrorStatus[]) : []),
    ...(op.idempotent ? ([409, 422] as ErrorStatus[]) : []),
  ]);
  const rl = op.auth === 'key' ? RATE_LIMIT : [];

  const responses: Record<string, ResponseConfig> = {};
  for (const [status, r] of Object.entries(op.responses)) {
    const content = r.schema
      ? { 'application/json': { schema: r.schema } }
      : r.content
        ? Object.fromEntries(Object.entries(r.content).map(([m, s]) => [m, { schema: s }]))
        : undefined;
    const replayed: HeaderName[] = op.idempotent ? ['Idempotent-Replayed'] : [];
    responses[status] = {
      description: r.description,
      headers: headersOf([...rl, ...(r.headers ?? []), ...replayed], r.requiredHeaders) as never,
      ...(content ? { content } : {}),
    };
  }
  for (const status of [...errors].sort()) {
    const extra: HeaderName[] = status === 429 || status === 503 ? ['Retry-After'] : [];
    responses[String(status)] = {
      description: ERROR_STATUSES[status],
      headers: headersOf([...(status === 401 ? [] : rl), ...extra]) as never,
      ...(op.bodyless ? {} : { content: { 'application/json': { schema: ErrorEnvelope } } }),
    };
  }

  const headers = op.idempotent ? (op.headers ? op.headers.extend(IdempotencyKey.shape) : IdempotencyKey) : op.headers;
  const route: RouteConfig = {
    method: op.method,
    path: op.path,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    operationId: `${op.method}${op.path.replace(/\{(\w+)\}/g, 'By_$1').replace(/[^A-Za-z0-9]+(\w)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    security: op.auth === 'key' ? [{ bearer: [] }, { cookie: [] }] : op.auth === 'refresh' ? [{ bearer: [] }] : [],
    request: {
      ...(op.params ? { params: op.params } : {}),
      ...(op.query ? { query: op.query } : {}),
      ...(headers ? { headers } : {}),
      ...(op.body ? { body: { required: !op.bodyOptional, content: { 'application/json': { schema: op.body } } } } : {}),
      ...(op.rawBody
        ? {
            body: {
              required: true,
              description: op.rawBody.description,
              content: { [op.rawBody.mediaType]: { schema: z.string().openapi({ format: 'binary' }) } },
            },
          }
        : {}),
    },
    responses,
  };
  if (!authenticated) route.security = [];
  registry.registerPath(route);
}
