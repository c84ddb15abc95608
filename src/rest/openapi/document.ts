/**
 * GET /api/v1/openapi.json: the OpenAPI 3.1 document of every REST endpoint,
 * generated from the zod schemas of src/api/schemas/. To describe a new endpoint, add one
 * `describe(registry, {...})` call below (and its schemas to src/api/schemas/); the test suite
 * fails on any response of an operation that is not described here.
 */
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { accountOperations } from './accounts';
import { teamOperations } from './teams';
import { shareOperations } from './shares';
import { describe } from './operation';
import { envelope, HEADERS, PROJECT_ID_PATTERN, z } from '../../api/schemas/common';
import * as R from '../../api/schemas/resources';
import * as inputs from '../../services/inputs';

const projectParam = z.object({
  projectId: z.string().openapi({ description: `Matches \`${PROJECT_ID_PATTERN}\`; any other id is a 404 on reads and a 400 on creates.` }),
});
const sessionParams = projectParam.extend({
  sessionId: z.string().openapi({ description: 'A UUID (any case). Not a UUID: 404 on reads and deletes, 400 on PUT.' }),
});
const ifNoneMatch = z.object({ 'If-None-Match': z.string().optional().openapi({ description: 'Weak comparison; a list or `*`. A match → 304.' }) });
const resumable = inputs.ResumableParam;
const SESSION_HEADERS = ['ETag', 'Last-Modified', 'X-Markdown-Size', 'X-Raw-Data-Size', 'X-Session-Data-Size'] as const;
const notModified = { description: 'Not modified: `ETag`, no body.', requiredHeaders: ['ETag' as const] };

function projectOperations(registry: OpenAPIRegistry): void {
  const tag = 'Projects';
  describe(registry, {
    method: 'get',
    path: '/projects',
    tag,
    auth: 'key',
    summary: 'List your projects',
    description: 'Most recent `lastActivity` first.',
    query: z.object({ resumable }),
    responses: { 200: { description: 'Your projects.', schema: envelope(z.strictObject({ projects: z.array(R.Project), total: z.int().min(0) })) } },
  });
  describe(registry, {
    method: 'post',
    path: '/projects',
    tag,
    auth: 'key',
    summary: 'Create a project',
    body: R.CreateProjectBody,
    idempotent: true,
    responses: { 201: { description: 'Created.', schema: envelope(z.strictObject({ project: R.Project })) } },
    errors: [403, 404, 409],
  });
  describe(registry, {
    method: 'get',
    path: '/projects/{projectId}',
    tag,
    auth: 'key',
    summary: 'Get a project',
    params: projectParam,
    responses: { 200: { description: 'The project.', schema: envelope(z.strictObject({ project: R.Project })) } },
    errors: [403, 404],
  });
  describe(registry, {
    method: 'patch',
    path: '/projects/{projectId}',
    tag,
    auth: 'key',
    summary: 'Update a project',
    params: projectParam,
    body: R.UpdateProjectBody,
    responses: { 200: { description: "The updated project's fields, directly in `data` (client-compatible).", schema: envelope(R.Project) } },
    errors: [403, 404],
  });
  describe(registry, {
    method: 'delete',
    path: '/projects/{projectId}',
    tag,
    auth: 'key',
    summary: 'Delete a project with its sessions',
    params: projectParam,
    responses: { 200: { description: 'Deleted: its sessions, their content and search entries are gone.', schema: envelope(R.DeletedProject) } },
    errors: [403, 404],
  });
}

function sessionOperations(registry: OpenAPIRegistry): void {
  const tag = 'Sessions';
  describe(registry, {
    method: 'get',
    path: '/projects/{projectId}/sessions',
    tag,
    auth: 'key',
    summary: "List a project's sessions",
    description: 'Most recently updated first, without content; keyset paging with `cursor`. With `resumable=true`: every session with `sessionData`, unpaged.',
    params: projectParam,
    // The schema the service parses the query with (src/services/inputs.ts), plus `resumable`.
    query: inputs.ProjectSessionsQuery.extend({ resumable }),
    responses: { 200: { description: 'One page.', schema: envelope(R.SessionPage) } },
    errors: [400, 403, 404],
  });
  describe(registry, {
    method: 'get',
    path: '/projects/{projectId}/sessions/sizes',
    tag,
    auth: 'key',
    summary: 'Sizes of every session of a project',
    description: 'What the upload CLI asks before syncing. A project you do not have yet → `{sessions: {}}`.',
    params: projectParam,
    responses: { 200: { description: 'Sizes by session id.', schema: envelope(R.SessionSizes) } },
    errors: [403, 404],
  });
  describe(registry, {
    method: 'get',
    path: '/sessions/recent',
    tag,
    auth: 'key',
    summary: 'Your most recently updated sessions',
    query: inputs.RecentSessionsQuery,
    responses: { 200: { description: 'Newest first, without `etag`.', schema: envelope(R.RecentSessions) } },
    errors: [400],
  });
  describe(registry, {
    method: 'get',
    path: '/projects/{projectId}/sessions/{sessionId}',
    tag,
    auth: 'key',
    summary: 'Read a session',
    description:
      "`Accept: application/json` (default) → the session with its markdown; `text/markdown` → the markdown itself; `application/vnd.specstory.session-data+json` → the session data as uploaded (the upload CLI's resume blob).",
    params: sessionParams,
    headers: ifNoneMatch.extend({ Accept: z.string().optional() }),
    responses: {
      200: {
        description: 'The session.',
        content: {
          'application/json': envelope(z.strictObject({ session: R.SessionDetail })),
          'text/markdown': z.string(),
          'application/vnd.specstory.session-data+json': z.unknown().openapi({ description: 'The JSON blob as uploaded.' }),
        },
        headers: [...SESSION_HEADERS],
        requiredHeaders: ['ETag', 'Last-Modified', 'X-Markdown-Size'],
      },
      304: notModified,
    },
    errors: [403, 404, 406],
  });
  describe(registry, {
    method: 'head',
    path: '/projects/{projectId}/sessions/{sessionId}',
    tag,
    auth: 'key',
    summary: "A session's validators and sizes",
    bodyless: true,
    params: sessionParams,
    headers: ifNoneMatch,
    responses: {
      200: {
        description: '`Content-Length` = `markdownSize`; no body.',
        headers: [...SESSION_HEADERS],
        requiredHeaders: ['ETag', 'Last-Modified', 'X-Markdown-Size'],
      },
      304: notModified,
    },
    errors: [403, 404],
  });
  describe(registry, {
    method: 'get',
    path: '/projects/{projectId}/sessions/{sessionId}/raw',
    tag,
    auth: 'key',
    summary: "A session's raw data, byte-exact",
    params: sessionParams,
    headers: ifNoneMatch,
    responses: {
      200: {
        description: 'The raw data (empty when none was uploaded).',
        content: { 'application/octet-stream': z.string().openapi({ format: 'binary' }) },
        headers: [...SESSION_HEADERS],
        requiredHeaders: ['ETag', 'Last-Modified'],
      },
      304: notModified,
    },
    errors: [403, 404],
  });
  describe(registry, {
    method: 'get',
    path: '/projects/{projectId}/sessions/{sessionId}/exchanges',
    tag,
    auth: 'key',
    summary: "A session's exchanges, one page at a time",
    description:
      "The paged read the web console's reader uses: the first exchange of a 50 MB session without downloading all of it. An exchange is a user turn (`_**User**_` outside code fences) with the agent turns that follow it; what precedes the first user turn is exchange 1; an exchange over 256 KiB comes in pieces (`continuation`). With content, a page stops before 1 MiB of markdown (it always holds at least one exchange), so it may hold fewer than `limit`: continue from `nextOffset`. Every page comes from one version of the session (`etag`).",
    params: sessionParams,
    headers: ifNoneMatch,
    query: inputs.ExchangesQuery,
    responses: {
      200: {
        description: 'One page of exchanges.',
        schema: envelope(R.SessionExchangePage),
        headers: [...SESSION_HEADERS],
        requiredHeaders: ['ETag', 'Last-Modified', 'X-Markdown-Size'],
      },
      304: notModified,
    },
    errors: [400, 403, 404],
  });
  describe(registry, {
    method: 'put',
    path: '/projects/{projectId}/sessions/{sessionId}',
    tag,
    auth: 'key',
    summary: 'Upload a session (create or replace)',
    description:
      'Creates the project when it does not exist. `Content-Encoding: gzip` accepted. Re-sending identical content changes nothing (same `etag` and `updatedAt`). Atomic.',
    params: sessionParams,
    headers: z.object({
      'If-Match': z.string().optional().openapi({ description: 'Only if the stored session has this etag, else 412.' }),
      'If-None-Match': z.literal('*').optional().openapi({ description: 'Only if the session does not exist yet, else 412.' }),
      'Content-Encoding': z.enum(['gzip', 'identity']).optional(),
    }),
    body: R.UploadSessionBody,
    idempotent: true,
    responses: {
      200: { description: 'Updated (or unchanged).', schema: envelope(R.UploadResult), requiredHeaders: ['ETag'] },
      201: { description: 'Created.', schema: envelope(R.UploadResult), requiredHeaders: ['ETag'] },
    },
    errors: [403, 412],
  });
  describe(registry, {
    method: 'patch',
    path: '/projects/{projectId}/sessions/{sessionId}',
    tag,
    auth: 'key',
    summary: 'Rename, retitle or retag a session',
    params: sessionParams,
    body: R.PatchSessionBody,
    responses: {
      200: { description: 'The session; `updatedAt` and `etag` change.', schema: envelope(z.strictObject({ session: R.Session })), headers: ['ETag'] },
    },
    errors: [403, 404],
  });
  describe(registry, {
    method: 'delete',
    path: '/projects/{projectId}/sessions/{sessionId}',
    tag,
    auth: 'key',
    summary: 'Delete a session',
    params: sessionParams,
    responses: { 200: { description: 'Deleted.', schema: envelope(z.strictObject({ success: z.literal(true) })) } },
    errors: [403, 404],
  });
  describe(registry, {
    method: 'post',
    path: '/search/resume',
    tag,
    auth: 'key',
    summary: 'Find resumable sessions (upload CLI)',
    body: R.ResumeSearchBody,
    idempotent: true,
    description: "Resumable sessions matching every query word, newest first, at most 500 (the upload CLI's cross-machine resume).",
    responses: { 200: { description: 'Matches.', schema: envelope(z.strictObject({ results: z.array(R.ResumeResult) })) } },
  });
  describe(registry, {
    method: 'get',
    path: '/billing/entitlement',
    tag: 'Clients',
    auth: 'key',
    summary: 'Features this server implements (upload CLI)',
    responses: { 200: { description: 'The CLI hides what is false.', schema: envelope(R.Entitlement) } },
  });
}

function keyOperations(registry: OpenAPIRegistry): void {
  const tag = 'API keys';
  describe(registry, {
    method: 'get',
    path: '/keys',
    tag,
    auth: 'key',
    summary: 'List your API keys',
    description: 'Device refresh tokens (device login) appear here too. Never tokens.',
    responses: { 200: { description: 'Your keys.', schema: envelope(z.strictObject({ keys: z.array(R.ApiKey), total: z.int().min(0) })) } },
  });
  describe(registry, {
    method: 'post',
    path: '/keys',
    tag,
    auth: 'key',
    summary: 'Create an API key',
    body: R.CreateKeyBody,
    description:
      'Made with an expiring key or a device access token, the new key expires no later than that key (or device session) and is revoked with it. `Idempotency-Key` is not honoured here: a replay would need the token, which is never stored. With `teamId` (a team where you are admin or member) the projects created through the key are the team’s; a team you are not in → 404 `Team not found`, a viewer → 403.',
    responses: { 201: { description: 'The key and its token (shown once).', schema: envelope(R.CreatedKey) } },
    errors: [403, 404],
  });
  describe(registry, {
    method: 'delete',
    path: '/keys/{keyId}',
    tag,
    auth: 'key',
    summary: 'Revoke an API key',
    description:
      'Takes effect on the very next request. Keys and device tokens created with this key (directly or through a /cli-login code it asked for) are revoked with it, at any depth. A key may revoke itself; another user’s key → 404.',
    params: z.object({ keyId: z.string() }),
    responses: { 200: { description: 'The key, `revokedAt` set.', schema: envelope(z.strictObject({ key: R.ApiKey })) } },
    errors: [404],
  });
}

function archiveOperations(registry: OpenAPIRegistry): void {
  const tag = 'Export and import';
  describe(registry, {
    method: 'get',
    path: '/export',
    tag,
    auth: 'key',
    summary: 'Export your archive (tar)',
    description:
      "Streams a deterministic tar of everything you own and the projects of the teams where you are admin (members and viewers do not export a team's projects): `manifest.json` first (format `session-archive-export`, version 1, every file with its size and sha256), then per project `projects/<id>/project.json` and per session `projects/<id>/sessions/<sessionId>/` with `session.json`, `markdown.md`, `raw` (when stored) and `session-data.json` (when stored), the stored bytes exactly. Entries sorted by path, JSON with sorted keys, modes 0644/0755, owner 0, times from the data: the same data always gives the same bytes. `Content-Length` is known in advance; a client that stops reading pauses the export.",
    query: z.object({
      projectId: z
        .union([z.string(), z.array(z.string())])
        .optional()
        .openapi({ description: 'Only these projects (repeatable); each must be yours or one of a team where you are admin.' }),
      teamId: z
        .string()
        .optional()
        .openapi({ description: 'Only the projects of this team, where you must be admin (not a member: 404 `Team not found`; a member or viewer: 403).' }),
    }),
    responses: {
      200: {
        description: 'The archive.',
        content: { 'application/x-tar': z.string().openapi({ format: 'binary' }) },
        headers: ['Content-Disposition'],
        requiredHeaders: ['Content-Disposition'],
      },
    },
    errors: [403, 404],
  });
  describe(registry, {
    method: 'post',
    path: '/import',
    tag,
    auth: 'key',
    summary: 'Import an export archive (tar)',
    description:
      'The tar of `GET /export` as the body (streamed; at most `MAX_IMPORT_BYTES`, default 10 GiB; no `Idempotency-Key`). Each file is checked against the manifest (size, sha256) before its session is written; a bad or missing file, or a project of another account, is reported in `errors` and nothing of that session is written; the rest is imported (still 200). Ids, times, titles, tags, extra metadata keys and ETags are kept; content passes secret redaction like an upload. Not a tar, a manifest of another format or version, a path outside `projects/` → 400 and nothing written; over the limit → 413.',
    query: z.object({
      onConflict: z.enum(['skip', 'overwrite', 'newer']).optional().openapi({
        description:
          "A session that exists already: keep it (`skip`, default), replace it (`overwrite`), or replace it when the archive's `updatedAt` is later (`newer`).",
      }),
      teamId: z.string().optional().openapi({
        description:
          "Import into this team: new projects are the team's, existing ones must be the team's. You must be admin or member of it (not a member: 404 `Team not found`, before the body is read; a viewer: 403). A member replaces only the sessions they uploaded.",
      }),
    }),
    rawBody: { mediaType: 'application/x-tar', description: 'An export archive.' },
    responses: { 200: { description: 'What was imported, and what was not.', schema: envelope(R.ImportSummary) } },
    errors: [403, 404],
  });
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
  projectOperations(registry);
  sessionOperations(registry);
  keyOperations(registry);
  archiveOperations(registry);
  accountOperations(registry);
  teamOperations(registry);
  shareOperations(registry);

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Session Archive REST API',
      version: '1',
      description:
        'Recorded AI coding sessions grouped into projects. JSON in and out (UTF-8); timestamps are ISO 8601 UTC with milliseconds; sizes are bytes of the UTF-8 encoding. Successes are `{success: true, data}`, errors `{success: false, error}`. Rate limits: 1000 REST requests per hour per user (fixed windows), reported in `X-RateLimit-*`. The GraphQL API is at `/api/v1/graphql` (described by `schema.graphql`).',
    },
    servers: [{ url: '/api/v1' }],
    tags: [
      { name: 'Projects' },
      { name: 'Sessions' },
      { name: 'API keys' },
      { name: 'Accounts', description: 'Browser sessions of the web console.' },
      { name: 'Device login', description: 'How the upload CLI and the desktop app log in.' },
      { name: 'Clients' },
      { name: 'Teams', description: 'Projects a team owns: members with roles, invitations, moving projects.' },
      { name: 'Export and import', description: 'Back up, restore, and move between servers.' },
    ],
  });
}

let cached: object | undefined;
/** The document (built once per process). */
export const openApiDocument = (): object => (cached ??= buildDocument());
