/** The audit log's entries, as GET /audit lists them and its export writes them (one per line). */
import { Timestamp, z } from './common';

export const AuditEntry = z
  .strictObject({
    id: z.string().meta({ description: 'Increasing with time; entries are listed newest first.' }),
    at: Timestamp,
    actor: z.strictObject({
      userId: z.string().nullable().meta({ description: 'The user who acted (or tried to); null for the operator (admin CLI) or an unknown caller.' }),
      label: z.string().meta({ description: 'Their email when the entry was written, `operator` or `anonymous`.' }),
    }),
    action: z.string().meta({ example: 'sign_in', description: 'What was done (docs/audit.md lists them).' }),
    target: z.strictObject({
      type: z.string().meta({ example: 'user' }),
      id: z.string().nullable(),
    }),
    teamId: z.string().nullable().meta({ description: 'The team the entry belongs to (its admins see it).' }),
    projectId: z.string().nullable(),
    ip: z.string().nullable().meta({ example: '203.0.113.0/24', description: "The client's network: IPv4 cut to /24, IPv6 to /48." }),
    result: z.enum(['success', 'failure']),
    detail: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .nullable()
      .meta({ description: 'Short facts about the action; never a secret.' }),
  })
  .meta({ id: 'AuditEntry' });

export const AuditPage = z
  .strictObject({
    entries: z.array(AuditEntry),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next (older) page; null at the end.' }),
  })
  .meta({ id: 'AuditPage' });
