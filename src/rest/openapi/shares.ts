/** Share links: making and managing them (a key or browser session), and reading one (no account for public links). */
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { envelope, PROJECT_ID_PATTERN, Timestamp, UUID_PATTERN, z } from '../../api/schemas/common';
import { describe } from './operation';

const ExpiresInDays = z
  .union([z.literal(1), z.literal(7), z.literal(30), z.literal(90), z.null()])
  .optional()
  .openapi({ description: 'Days until the link stops working: 1, 7, 30 (the default) or 90; null for never, only with `SHARES_ALLOW_NEVER=true` (else 400).' });
const Hidden = z.array(z.int().min(1)).optional().openapi({
  description: 'Exchange numbers (1-based, as in the reader’s table of contents) the link leaves out. Hidden exchanges are never copied into the snapshot.',
});
const Audience = z
  .enum(['public', 'signed-in'])
  .openapi({ description: '`public`: anyone with the link; `signed-in`: any signed-in account of this service.' });

const Share = z
  .strictObject({
    id: z.string(),
    url: z.string().openapi({ description: '`<base>/s/<token>`; the token carries 128 random bits and a MAC, never a session or project id.' }),
    projectId: z.string(),
    sessionId: z.string(),
    sessionTitle: z.string().openapi({ description: 'The session’s title now (its user title, else its name).' }),
    createdAt: Timestamp,
    snapshotAt: Timestamp.openapi({ description: 'When the snapshot the link shows was taken (creation or the last refresh).' }),
    expiresAt: Timestamp.nullable(),
    audience: Audience,
    hiddenExchanges: z.array(z.int()),
    exchangeCount: z.int().min(0),
    views: z.int().min(0),
  })
  .openapi('Share', { description: 'A share link (docs/shares.md). Only its creator sees it.' });

const SharedExchange = z.union([
  z.strictObject({ number: z.int().min(1), title: z.string(), markdown: z.string() }),
  z.strictObject({ number: z.int().min(1), hidden: z.literal(true) }),
]);

const SharedSession = z
  .strictObject({
    title: z.string(),
    createdAt: Timestamp.openapi({ description: 'The session’s creation time.' }),
    sharedAt: Timestamp.openapi({ description: 'When the snapshot was taken.' }),
    agentName: z.string().nullable(),
    llmModels: z.array(z.string()),
    exchangeCount: z.int().min(0),
    hiddenCount: z.int().min(0),
    from: z.int().min(1),
    nextFrom: z.int().min(1).nullable().openapi({ description: 'The `from` of the next page; null at the end.' }),
    exchanges: z.array(SharedExchange),
  })
  .openapi('SharedSession', { description: 'What a share link shows: never raw data, session data, tags, device, branch or any email.' });

const SessionParams = z.object({ projectId: z.string().regex(new RegExp(PROJECT_ID_PATTERN)), sessionId: z.string().regex(new RegExp(UUID_PATTERN)) });
const ShareParams = z.object({ shareId: z.string() });

export function shareOperations(registry: OpenAPIRegistry): void {
  const tag = 'Share links';
  describe(registry, {
    method: 'post',
    path: '/projects/{projectId}/sessions/{sessionId}/shares',
    tag,
    auth: 'key',
    summary: 'Share a session at a link',
    description:
      'By whoever may change the session (its owner; in a team project its uploader or a team admin). Takes a snapshot of the session now; hidden exchanges are not copied. `SHARES=off` → 403; `SHARES=signed-in` refuses `public` (400). A session whose stored content still holds secrets (uploaded under `REDACT_SECRETS=report` or `off`) → 409 `Session holds unmasked secrets (<rules>)`.',
    params: SessionParams,
    body: z.strictObject({ expiresInDays: ExpiresInDays, hiddenExchanges: Hidden, audience: Audience.optional() }),
    responses: { 201: { description: 'The link.', schema: envelope(z.strictObject({ share: Share })) } },
    errors: [403, 404, 409],
  });
  describe(registry, {
    method: 'get',
    path: '/projects/{projectId}/sessions/{sessionId}/shares',
    tag,
    auth: 'key',
    summary: 'Your links to a session',
    params: SessionParams,
    responses: { 200: { description: 'Newest first.', schema: envelope(z.strictObject({ shares: z.array(Share), total: z.int().min(0) })) } },
    errors: [403, 404],
  });
  describe(registry, {
    method: 'get',
    path: '/shares',
    tag,
    auth: 'key',
    summary: 'All your share links',
    responses: { 200: { description: 'Newest first (at most 1000).', schema: envelope(z.strictObject({ shares: z.array(Share), total: z.int().min(0) })) } },
  });
  describe(registry, {
    method: 'patch',
    path: '/shares/{shareId}',
    tag,
    auth: 'key',
    summary: 'Change what a link hides, its expiry, or take a new snapshot',
    description:
      'Un-hiding an exchange the snapshot never held copies its current content in. `refresh: true` replaces the snapshot with the session as it is now. Another user’s link → 404.',
    params: ShareParams,
    body: z.strictObject({ expiresInDays: ExpiresInDays, hiddenExchanges: Hidden, refresh: z.boolean().optional() }),
    responses: { 200: { description: 'The link.', schema: envelope(z.strictObject({ share: Share })) } },
    errors: [403, 404, 409],
  });
  describe(registry, {
    method: 'delete',
    path: '/shares/{shareId}',
    tag,
    auth: 'key',
    summary: 'Revoke a link',
    description: 'The link answers 404 from the next request, on every instance.',
    params: ShareParams,
    responses: { 200: { description: 'Revoked.', schema: envelope(z.strictObject({})) } },
    errors: [404],
  });
  describe(registry, {
    method: 'get',
    path: '/share/{token}',
    tag,
    auth: 'none',
    summary: 'Read a shared session',
    description:
      'No account needed for `public` links; a `signed-in` link needs a key or browser session (else 401). Paged like the reader: `from` (exchange number, default 1) and `limit` (default 50, at most 500), at most 8 MiB of markdown a page (at least one exchange). Unknown, malformed, expired and revoked tokens all get the same 404 `Share link not found`. Sends `X-Robots-Tag: noindex, nofollow, noarchive`, `Referrer-Policy: no-referrer`, `Cache-Control: no-store`; sets no cookie. Reading the first page counts a view. Rate limited per address (`SHARE_READS_PER_MINUTE`, default 120) → 429.',
    params: z.object({ token: z.string() }),
    query: z.object({ from: z.string().regex(/^\d+$/).optional(), limit: z.string().regex(/^\d+$/).optional() }),
    responses: { 200: { description: 'The page.', schema: envelope(SharedSession) } },
    errors: [401, 404, 429],
  });
}
