/**
 * Building blocks of the REST schemas: zod (documented through its own `.meta()`), the
 * `{success, data}` envelope, the error envelope, and the response headers every description
 * refers to. Every schema of src/api/schemas/ is plain zod: it validates input where a router
 * uses it and it is what GET /api/v1/openapi.json is generated from.
 */
import { z } from 'zod';

export { z };

/** ISO 8601 UTC with milliseconds, e.g. `2024-01-15T10:30:00.000Z`. */
export const Timestamp = z.iso.datetime().meta({ example: '2024-01-15T10:30:00.000Z' });

/** `{success: true, data}`: every JSON success response of projects, sessions, API keys and the upload CLI. */
export const envelope = <T extends z.ZodType>(data: T) => z.strictObject({ success: z.literal(true), data });

export const ErrorEnvelope = z
  .strictObject({
    success: z.literal(false),
    error: z.string().meta({ example: 'Project not found' }),
  })
  .meta({ id: 'Error', description: 'Every error of the REST API. The message never carries a stack, SQL or a token.' });

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** Response headers, as components (referenced by name from every response that sends them). */
export const HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed per window for this user (REST and GraphQL have separate budgets).', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window (0 on a 429).', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { description: 'When the window ends, in UTC epoch seconds.', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying (whole seconds, rounded up).', schema: { type: 'integer', minimum: 0 } },
  ETag: { description: 'Weak tag of everything a client can read of the session: `W/"<hex digest>"`.', schema: { type: 'string', pattern: '^W/"[0-9a-f]+"$' } },
  'Last-Modified': { description: "The session's `updatedAt`, as an HTTP date.", schema: { type: 'string' } },
  'X-Markdown-Size': { description: 'Bytes of the markdown (UTF-8).', schema: { type: 'integer', minimum: 0 } },
  'X-Raw-Data-Size': { description: 'Bytes of the raw data.', schema: { type: 'integer', minimum: 0 } },
  'X-Session-Data-Size': {
    description: "Bytes of the session data (the upload CLI's resumable session data), 0 when none.",
    schema: { type: 'integer', minimum: 0 },
  },
  'Idempotent-Replayed': {
    description: '`true` on the stored first response to an `Idempotency-Key`, sent again.',
    schema: { type: 'string', enum: ['true'] },
  },
  'Content-Disposition': { description: '`attachment; filename="…"`: a file to save.', schema: { type: 'string' } },
  'Set-Cookie': {
    description: 'The browser session: `sa_session=<token>; HttpOnly; SameSite=Lax; Path=/` (plus `Secure` on HTTPS).',
    schema: { type: 'string' },
  },
} as const;
export type HeaderName = keyof typeof HEADERS;

/** Statuses the API answers with, and what each means for every operation that lists it. */
export const ERROR_STATUSES = {
  400: 'Bad request: the message says what is wrong (`Invalid JSON in request body`, `Missing required field: name`, …).',
  401: 'Not authenticated: `Invalid session token` (every token problem, missing header included). HEAD: no body.',
  403: "Another user's resource: `Insufficient permissions`; a cookie request without a valid CSRF token: `Invalid CSRF token`. HEAD: no body.",
  404: '`Project not found` / `Session not found` / `Not found` (`Session data not found` for the session-data type). HEAD: no body.',
  406: 'Not acceptable: the `Accept` header names no representation this operation produces.',
  408: '`Request timeout`: the body did not arrive within 60 s plus 1 s per MiB; the connection is closed.',
  409: 'Conflict: the id is already yours; or, with `Idempotency-Key`, the first request with this key is still in progress after 5 minutes.',
  412: '`Precondition failed`: `If-Match` did not match, or `If-None-Match: *` and the session exists.',
  413: '`Request body too large` (more than `MAX_BODY_BYTES` after decompression).',
  415: '`Unsupported content encoding` (only gzip and identity).',
  422: '`Idempotency key reused with a different request`.',
  429: '`Rate limit exceeded. Try again in N seconds.`',
  500: '`Internal server error`.',
  503: '`Service temporarily unavailable` (database unreachable) or `Server busy, retry later` (load shed before the request was read, nothing written; or the database refused a new connection for having too many).',
} as const;
export type ErrorStatus = keyof typeof ERROR_STATUSES;
