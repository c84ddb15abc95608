/** Export and import of archives (tar). */
import { defineRoute } from '../route';
import { z } from '../schemas/common';
import * as R from '../schemas/resources';

export const archiveRoutes = {
  exportArchive: defineRoute({
    method: 'get',
    path: '/export',
    tag: 'Export and import',
    auth: 'key',
    streams: true,
    summary: 'Export your archive (tar)',
    description:
      "Streams a deterministic tar of everything you own and the projects of the teams where you are admin (members and viewers do not export a team's projects): `manifest.json` first (format `session-archive-export`, version 1, every file with its size and sha256), then per project `projects/<id>/project.json` and per session `projects/<id>/sessions/<sessionId>/` with `session.json`, `markdown.md`, `raw` (when stored) and `session-data.json` (when stored), the stored bytes exactly. Entries sorted by path, JSON with sorted keys, modes 0644/0755, owner 0, times from the data: the same data always gives the same bytes. `Content-Length` is known in advance; a client that stops reading pauses the export. An export is a long read: one user has at most `LONG_READS_PER_USER` (4) downloads and exports at once (one more → 429 with `Retry-After`); a reader that takes nothing for `LONG_READ_IDLE_S` (30) seconds is cut off; a session changed or deleted while the archive streams ends it short (its manifest would no longer hold).",
    query: z.object({
      projectId: z
        .union([z.string(), z.array(z.string())])
        .optional()
        .meta({ description: 'Only these projects (repeatable); each must be yours or one of a team where you are admin.' }),
      teamId: z
        .string()
        .optional()
        .meta({ description: 'Only the projects of this team, where you must be admin (not a member: 404 `Team not found`; a member or viewer: 403).' }),
    }),
    responses: {
      200: {
        description: 'The archive.',
        content: { 'application/x-tar': z.string().meta({ format: 'binary' }) },
        headers: ['Content-Disposition'],
        requiredHeaders: ['Content-Disposition'],
      },
    },
    errors: [403, 404],
  }),
  importArchive: defineRoute({
    method: 'post',
    path: '/import',
    tag: 'Export and import',
    auth: 'key',
    summary: 'Import an export archive (tar)',
    description:
      'The tar of `GET /export` as the body (streamed; at most `MAX_IMPORT_BYTES`, default 10 GiB; no `Idempotency-Key`). Each file is checked against the manifest (size, sha256) before its session is written; a bad or missing file, or a project of another account, is reported in `errors` and nothing of that session is written; the rest is imported (still 200). Ids, times, titles, tags, extra metadata keys and ETags are kept; content passes secret redaction like an upload. Not a tar, a manifest of another format or version, a path outside `projects/` → 400 and nothing written; over the limit → 413; with `onConflict` other than `skip`, a listed project on legal hold → 409 `Project is on legal hold` and nothing written.',
    query: z.object({
      onConflict: z.enum(['skip', 'overwrite', 'newer']).optional().meta({
        description:
          "A session that exists already: keep it (`skip`, default), replace it (`overwrite`), or replace it when the archive's `updatedAt` is later (`newer`).",
      }),
      teamId: z.string().optional().meta({
        description:
          "Import into this team: new projects are the team's, existing ones must be the team's. You must be admin or member of it (not a member: 404 `Team not found`, before the body is read; a viewer: 403). A member replaces only the sessions they uploaded.",
      }),
    }),
    rawBody: { mediaType: 'application/x-tar', description: 'An export archive.' },
    responses: {
      200: {
        description:
          'What was imported, and what was not: `success` is true only when every session of the archive was written (or skipped by the conflict rule) and nothing was reported; else false, with the counts and the first errors.',
        schema: z.strictObject({ success: z.boolean(), data: R.ImportSummary }),
      },
    },
    errors: [403, 404, 409],
  }),
};
