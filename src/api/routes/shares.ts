/** Share links: making and managing them (a key or browser session), and reading one (no account for public links). */
import { defineRoute } from '../route';
import { envelope, UUID_PATTERN, z } from '../schemas/common';
import { PROJECT_ID_PATTERN } from '../../domain/project';
import { Share, SharedSession } from '../schemas/shares';
import { CreateShareInput, UpdateShareInput } from '../../services/share-inputs';

const SessionParams = z.object({ projectId: z.string().regex(new RegExp(PROJECT_ID_PATTERN)), sessionId: z.string().regex(new RegExp(UUID_PATTERN)) });
const ShareParams = z.object({ shareId: z.string() });

export const shareRoutes = {
  createShare: defineRoute({
    method: 'post',
    path: '/projects/{projectId}/sessions/{sessionId}/shares',
    tag: 'Share links',
    auth: 'key',
    summary: 'Share a session at a link',
    description:
      'By whoever may change the session (its owner; in a team project its uploader or a team admin). Takes a snapshot of the session now; hidden exchanges are not copied. `SHARES=off` → 403; `SHARES=signed-in` refuses `public` (400). A session whose stored content still holds secrets (uploaded under `REDACT_SECRETS=report` or `off`) → 409 `Session holds unmasked secrets (<rules>)`.',
    params: SessionParams,
    body: CreateShareInput,
    responses: { 201: { description: 'The link.', schema: envelope(z.strictObject({ share: Share })) } },
    errors: [403, 404, 409],
  }),
  listSessionShares: defineRoute({
    method: 'get',
    path: '/projects/{projectId}/sessions/{sessionId}/shares',
    tag: 'Share links',
    auth: 'key',
    summary: 'Your links to a session',
    params: SessionParams,
    responses: { 200: { description: 'Newest first.', schema: envelope(z.strictObject({ shares: z.array(Share), total: z.int().min(0) })) } },
    errors: [403, 404],
  }),
  listShares: defineRoute({
    method: 'get',
    path: '/shares',
    tag: 'Share links',
    auth: 'key',
    summary: 'All your share links',
    responses: { 200: { description: 'Newest first (at most 1000).', schema: envelope(z.strictObject({ shares: z.array(Share), total: z.int().min(0) })) } },
  }),
  updateShare: defineRoute({
    method: 'patch',
    path: '/shares/{shareId}',
    tag: 'Share links',
    auth: 'key',
    summary: 'Change what a link hides, its expiry, or take a new snapshot',
    description:
      'Un-hiding an exchange the snapshot never held copies its current content in. `refresh: true` replaces the snapshot with the session as it is now. Another user’s link → 404.',
    params: ShareParams,
    body: UpdateShareInput,
    responses: { 200: { description: 'The link.', schema: envelope(z.strictObject({ share: Share })) } },
    errors: [403, 404, 409],
  }),
  deleteShare: defineRoute({
    method: 'delete',
    path: '/shares/{shareId}',
    tag: 'Share links',
    auth: 'key',
    summary: 'Revoke a link',
    description: 'The link answers 404 from the next request, on every instance.',
    params: ShareParams,
    responses: { 200: { description: 'Revoked.', schema: envelope(z.strictObject({})) } },
    errors: [404],
  }),
  readShare: defineRoute({
    method: 'get',
    path: '/share/{token}',
    tag: 'Share links',
    auth: 'none',
    rateLimit: 'share_reads',
    summary: 'Read a shared session',
    description:
      'No account needed for `public` links; a `signed-in` link needs a key or browser session (else 401). Paged like the reader: `from` (exchange number, default 1) and `limit` (default 50, at most 500), at most 8 MiB of markdown a page (at least one exchange). Unknown, malformed, expired and revoked tokens all get the same 404 `Share link not found`. Sends `X-Robots-Tag: noindex, nofollow, noarchive`, `Referrer-Policy: no-referrer`, `Cache-Control: no-store`; sets no cookie. Reading the first page counts a view. Rate limited per address (`SHARE_READS_PER_MINUTE`, default 120) → 429.',
    params: z.object({ token: z.string() }),
    query: z.object({ from: z.string().regex(/^\d+$/).optional(), limit: z.string().regex(/^\d+$/).optional() }),
    responses: { 200: { description: 'The page.', schema: envelope(SharedSession) } },
    errors: [401, 404, 429],
  }),
};
