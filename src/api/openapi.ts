/**
 * The OpenAPI 3.1 document of the API (GET /api/v1/openapi.json), built from the route table
 * (src/api/routes) without a server: each declaration becomes an operation with the standard
 * error responses, the error envelope, the rate-limit headers and the security requirement of its
 * kind of authentication.
 */
import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { API_PREFIX, type Route } from './route';
import { ROUTES } from './routes';
import { ERROR_STATUSES, ErrorEnvelope, HEADERS, type ErrorStatus, type HeaderName, z } from './schemas/common';

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
  'Idempotency-Key': z.string().min(1).optional().meta({
    description:
      'Repeating this request with the same key (1–255 visible ASCII characters) within 24 hours returns the first response (status, body, `ETag`; marked `Idempotent-Replayed: true`) without acting again; a repeat that arrives while the first is running waits for it. A key is scoped to (user, method, path): the same key on another method or path is another key; the same key, method and path with another body or query → 422. A 5xx answer frees the key; an answer over 1 MiB, or one that carries a freshly issued credential or one-time link, is never kept (a repeat acts again).',
  }),
});

/** `key` and `cookie` operations are authenticated; `refresh` checks its own token. */
const SECURITY: Record<Route['auth'], Array<Record<string, string[]>>> = {
  key: [{ bearer: [] }, { cookie: [] }],
  cookie: [{ cookie: [] }],
  refresh: [{ bearer: [] }],
  none: [],
};

function describe(registry: OpenAPIRegistry, op: Route): void {
  const signedIn = op.auth === 'key' || op.auth === 'cookie';
  // Any request can be malformed (a path that does not decode, a bad query) → 400.
  // A cookie-authenticated write without the session's CSRF token (or from a foreign Origin) → 403 (the CSRF rule);
  // any write made with a read-only key → 403 `This key is read-only`.
  const csrf: ErrorStatus[] = signedIn && op.method !== 'get' && op.method !== 'head' ? [403] : [];
  const common: ErrorStatus[] = op.auth === 'none' ? [400, 500, 503] : [400, 401, 429, 500, 503, ...csrf];
  const errors = new Set<ErrorStatus>([
    ...common,
    ...(op.errors ?? []),
    ...(op.body || op.rawBody ? ([400, 408, 413, 415] as ErrorStatus[]) : []),
    ...(op.idempotent ? ([409, 422] as ErrorStatus[]) : []),
  ]);
  const rl = signedIn ? RATE_LIMIT : [];

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
      ...(op.bodyless ? {} : { content: { 'application/json': { schema: op.errorSchema ?? ErrorEnvelope } } }),
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
    security: SECURITY[op.auth],
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
              content: { [op.rawBody.mediaType]: { schema: z.string().meta({ format: 'binary' }) } },
            },
          }
        : {}),
    },
    responses,
  };
  registry.registerPath(route);
}

function buildDocument(): object {
  const registry = new OpenAPIRegistry();
  for (const [name, header] of Object.entries(HEADERS)) registry.registerComponent('headers', name, header as never);
  registry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'An API key (`npm run cli -- keys create`, `POST /keys`, the console) or a device access token (device login): `Authorization: Bearer <token>`.',
  });
  registry.registerComponent('securitySchemes', 'cookie', {
    type: 'apiKey',
    in: 'cookie',
    name: 'sa_session',
    description:
      'The browser session of the console (`POST /auth/sign-in`). Requests other than GET/HEAD must also send `X-CSRF-Token` (from `GET /auth/session`) and, with an `Origin` header, this service’s own origin; else 403 `Invalid CSRF token`.',
  });
  for (const route of ROUTES) describe(registry, route);

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Session Archive REST API',
      version: '1',
      description:
        'Recorded AI coding sessions grouped into projects. JSON in and out (UTF-8); timestamps are ISO 8601 UTC with milliseconds; sizes are bytes of the UTF-8 encoding. Successes are `{success: true, data}`, errors `{success: false, error}`. Rate limits: 1000 REST requests per hour per user (fixed windows), reported in `X-RateLimit-*`. The GraphQL API is at `/api/v1/graphql` (described by `schema.graphql`).',
    },
    servers: [{ url: API_PREFIX }],
    tags: [
      { name: 'Projects' },
      { name: 'Sessions' },
      { name: 'API keys' },
      { name: 'Accounts', description: 'Browser sessions of the web console.' },
      { name: 'Device login', description: 'How the upload CLI and the desktop app log in.' },
      { name: 'Clients' },
      { name: 'Teams', description: 'Projects a team owns: members with roles, invitations, moving projects.' },
      { name: 'Export and import', description: 'Back up, restore, and move between servers.' },
      { name: 'Audit log', description: 'Who did what, from where: sign-ins, keys, accounts, teams, projects, share links, exports and imports.' },
      { name: 'GraphQL', description: 'The GraphQL API: one endpoint, described by `schema.graphql`.' },
    ],
  });
}

let cached: object | undefined;
/** The document (built once per process; no server needed). */
export const openApiDocument = (): object => (cached ??= buildDocument());
