/** The audit log: a page of entries, and all of them as JSON lines. */
import { defineRoute } from '../route';
import { AuditPage } from '../schemas/audit';
import { envelope, z } from '../schemas/common';
import { AuditFilterQuery, AuditQuery } from '../../services/audit-log';

const WHO =
  "Instance administrators read every entry; a team's admins read the entries of their teams (a key, device login, member, project, share link, export or import of the team); anyone else → 403.";

export const auditRoutes = {
  listAudit: defineRoute({
    method: 'get',
    path: '/audit',
    tag: 'Audit log',
    auth: 'key',
    summary: 'The audit log (administrators, team admins)',
    description: `Newest first; keyset paging with \`cursor\`; the filters intersect. ${WHO} Entries are kept \`AUDIT_RETENTION_DAYS\` (365) days.`,
    query: AuditQuery,
    responses: { 200: { description: 'One page.', schema: envelope(AuditPage) } },
    errors: [400, 403],
  }),
  exportAudit: defineRoute({
    method: 'get',
    path: '/audit/export',
    tag: 'Audit log',
    auth: 'key',
    streams: true,
    summary: 'The audit log as JSON lines (administrators, team admins)',
    description: `Every entry the filters keep, newest first, one \`AuditEntry\` JSON object per line, streamed (a long read: at most \`LONG_READS_PER_USER\` at once per user; an idle reader is cut off). ${WHO}`,
    query: AuditFilterQuery,
    responses: {
      200: {
        description: 'One entry per line.',
        content: { 'application/x-ndjson': z.string() },
        headers: ['Content-Disposition'],
        requiredHeaders: ['Content-Disposition'],
      },
    },
    errors: [400, 403],
  }),
};
