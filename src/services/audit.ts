/**
 * The audit log: who did what to what, from where, and whether it worked. Every service whose
 * operation is security-relevant calls `recordAudit` where the operation happens; when the
 * operation runs in a transaction it passes the transaction, so the entry commits (or rolls back)
 * with it. Entries are appended, never changed (only the retention sweep removes old ones).
 *
 * Never a secret: an entry names its target by id (a key's id, never its token; a share link's
 * id, never its token or URL), and `detail` takes only short scalar values under names that do not
 * look like secrets (a name containing password, secret or token is dropped).
 */
import { insertAuditEntry } from '../data/audit';
import type { Sql } from '../data/sql';
import { requestOrigin, truncateIp } from '../domain/request-origin';
import { isUserCtx, type AnyCtx } from './context';

/** Every action the log records (`action` of an entry). */
export const AUDIT_ACTIONS = [
  'sign_in',
  'key.create',
  'key.revoke',
  'device.code',
  'device.login',
  'password.change',
  'password.reset_request',
  'password.reset',
  'user.create',
  'user.disable',
  'user.enable',
  'user.delete',
  'user.role',
  'team.create',
  'team.delete',
  'member.add',
  'member.remove',
  'member.role',
  'project.move',
  'project.delete',
  'share.create',
  'share.revoke',
  'export',
  'import',
  'retention.set',
  'legal_hold.set',
  'connector.grant',
  'connector.revoke',
  'webhook.create',
  'webhook.delete',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What an entry is about (`targetType`). */
type AuditTargetType = 'user' | 'key' | 'device' | 'team' | 'project' | 'session' | 'share' | 'connector' | 'webhook' | 'instance';

interface AuditEvent {
  action: AuditAction;
  target: { type: AuditTargetType; id?: string | null };
  /** Default 'success'. */
  result?: 'success' | 'failure';
  /** The team the entry belongs to (its admins see it); default: the project's owning team, if any. */
  teamId?: string | null;
  projectId?: string | null;
  /** Short, non-secret facts (a reason, a role, a count). */
  detail?: Record<string, string | number | boolean | null>;
  /**
   * Who acted, when the context does not say: a sign-in (public context) names the user it
   * signed in, or tried to. Default: the context's user, `operator` or `anonymous`.
   */
  actorUserId?: string | null;
}

const DETAIL_BYTES = 2000;
const SECRET_NAME = /password|secret|token/i;

function detailJson(detail: AuditEvent['detail']): string | null {
  if (!detail) return null;
  const kept: Record<string, string | number | boolean | null> = {};
  for (const [k, v] of Object.entries(detail)) {
    if (SECRET_NAME.test(k)) continue;
    kept[k] = typeof v === 'string' ? v.slice(0, 200) : v;
  }
  const json = JSON.stringify(kept);
  return json === '{}' ? null : json.slice(0, DETAIL_BYTES);
}

/**
 * Appends one entry for `event`, done by the caller of `ctx`, from the request's client address
 * (truncated: IPv4 /24, IPv6 /48). `db`: the operation's transaction when it has one (the entry
 * is written with the action), else the write pool.
 */
export async function recordAudit(ctx: AnyCtx, event: AuditEvent, db?: Sql): Promise<void> {
  const ctxUser = isUserCtx(ctx) ? ctx.user.id : null;
  const actorUserId = event.actorUserId !== undefined ? event.actorUserId : ctxUser;
  const fallbackLabel = !isUserCtx(ctx) && ctx.caller === 'operator' ? 'operator' : 'anonymous';
  await insertAuditEntry(db ?? ctx.deps.db.writes, {
    actorUserId,
    actorLabel: actorUserId ?? fallbackLabel,
    action: event.action,
    targetType: event.target.type,
    targetId: event.target.id ?? null,
    teamId: event.teamId ?? null,
    projectId: event.projectId ?? null,
    ip: truncateIp(requestOrigin()?.ip),
    result: event.result ?? 'success',
    detail: detailJson(event.detail),
  });
}
