/** An audit log entry as REST lists it and the JSON-lines export writes it. */
import type { z } from 'zod';
import type { AuditEntry } from '../../api/schemas/audit';
import type { AuditRow } from '../../data/audit';

export type AuditEntryDto = z.input<typeof AuditEntry>;

function detailOf(json: string | null): AuditEntryDto['detail'] {
  if (!json) return null;
  try {
    const v: unknown = JSON.parse(json);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as AuditEntryDto['detail']) : null;
  } catch {
    return null;
  }
}

export const presentAuditEntry = (row: AuditRow): AuditEntryDto => ({
  id: String(row.id),
  at: row.at.toISOString(),
  actor: { userId: row.actorUserId, label: row.actorLabel },
  action: row.action,
  target: { type: row.targetType, id: row.targetId },
  teamId: row.teamId,
  projectId: row.projectId,
  ip: row.ip,
  result: row.result === 'failure' ? 'failure' : 'success',
  detail: detailOf(row.detail),
});
