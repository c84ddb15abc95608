/** Path parameters and request headers several operations share. */
import { PROJECT_ID_PATTERN } from '../../domain/project';
import { z } from './common';

export const projectParam = z.object({
  projectId: z.string().meta({ description: `Matches \`${PROJECT_ID_PATTERN}\`; any other id is a 404 on reads and a 400 on creates.` }),
});
export const sessionParams = projectParam.extend({
  sessionId: z.string().meta({ description: 'A UUID (any case). Not a UUID: 404 on reads and deletes, 400 on PUT.' }),
});
export const ifNoneMatch = z.object({ 'If-None-Match': z.string().optional().meta({ description: 'Weak comparison; a list or `*`. A match → 304.' }) });
export const SESSION_HEADERS = ['ETag', 'Last-Modified', 'X-Markdown-Size', 'X-Raw-Data-Size', 'X-Session-Data-Size'] as const;
export const notModified = { description: 'Not modified: `ETag`, no body.', requiredHeaders: ['ETag' as const] };

/** What an operation whose answer streams says about it (docs/operations.md, "Long reads"). */
export const LONG_READ =
  'A download of more than 1 MiB streams: one user has at most `LONG_READS_PER_USER` (4) downloads and exports at once (one more → 429 with `Retry-After`), and a reader that takes nothing for `LONG_READ_IDLE_S` (30) seconds is cut off. A reader that keeps up gets one version whatever is written meanwhile; content replaced while a reader has stopped reading ends its answer short (never a mix of versions).';
