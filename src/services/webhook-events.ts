/**
 * Webhook events, written by the writes they describe inside their transaction (the outbox of
 * src/data/webhooks.ts): a rolled-back write sends nothing, a committed one is delivered at least
 * once. A body is `{type, timestamp, data}`; data holds ids, the display title, sizes and the
 * console's URL, never transcript text.
 */
import { anyWebhookListening, enqueueWebhookEvent, enqueueWebhookEvents } from '../data/webhooks';
import type { SessionRow } from '../domain/session-row';
import type { ShareState } from '../data/shares';
import type { Tx } from '../data/transaction';
import { newEventId, type WebhookEvent } from '../domain/webhooks';
import type { Config } from '../config';
import { sessionTitle } from './sessions';

type Base = Partial<Pick<Config, 'publicUrl'>>;

/** A console page's URL: absolute with PUBLIC_URL, else the path. */
const consoleUrl = (config: Base, path: string) => `${config.publicUrl ?? ''}${path}`;
const projectPath = (projectId: string) => `/projects/${encodeURIComponent(projectId)}`;
const sessionPath = (projectId: string, sessionId: string) => `${projectPath(projectId)}/sessions/${sessionId}`;

/** An event's body: `{type, timestamp, data}`. */
const payloadOf = (type: WebhookEvent, data: Record<string, unknown>, timestamp = new Date()) =>
  JSON.stringify({ type, timestamp: timestamp.toISOString(), data });

/** Records one event for the webhooks of `scopeIds` (the owners it concerns) that may read it. */
async function record(tx: Tx, type: WebhookEvent, scopeIds: readonly string[], projectId: string | null, data: Record<string, unknown>): Promise<void> {
  const eventId = newEventId();
  const payload = payloadOf(type, data);
  for (const scopeId of new Set(scopeIds)) await enqueueWebhookEvent(tx, { eventId, type, scopeId, projectId, payload });
}

type SessionFacts = Pick<
  SessionRow,
  'projectId' | 'id' | 'userId' | 'name' | 'userTitle' | 'metadataJson' | 'markdownSize' | 'rawDataSize' | 'sessionDataSize' | 'createdAt' | 'updatedAt'
>;

/** `session.created` / `session.updated`: a version written, or its title, name or tags changed. */
export function sessionWritten(tx: Tx, config: Base, type: 'session.created' | 'session.updated', row: SessionFacts): Promise<void> {
  return record(tx, type, [row.userId], row.projectId, {
    projectId: row.projectId,
    sessionId: row.id,
    title: sessionTitle(row),
    markdownSize: row.markdownSize,
    rawDataSize: row.rawDataSize,
    sessionDataSize: row.sessionDataSize,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    consoleUrl: consoleUrl(config, sessionPath(row.projectId, row.id)),
  });
}

type DeletedSession = { scopeId: string; projectId: string; sessionId: string; title: string | null };

const deletedData = (config: Base, s: DeletedSession) => ({
  projectId: s.projectId,
  sessionId: s.sessionId,
  title: s.title,
  consoleUrl: consoleUrl(config, projectPath(s.projectId)),
});

/** `session.deleted`: the session alone, or with its project. */
export function sessionDeleted(tx: Tx, config: Base, s: DeletedSession): Promise<void> {
  return record(tx, 'session.deleted', [s.scopeId], s.projectId, deletedData(config, s));
}

/**
 * `session.deleted` for every session of a project deleted at once: asked once whether any webhook
 * listens, so that a large project's delete writes nothing per session when none does, and
 * written a few hundred events per statement when one does.
 */
export async function sessionsDeleted(tx: Tx, config: Base, scopeId: string, projectId: string, sessionIds: readonly string[]): Promise<void> {
  if (sessionIds.length === 0 || !(await anyWebhookListening(tx, 'session.deleted', scopeId, projectId))) return;
  const now = new Date();
  const events = sessionIds.map((sessionId) => ({
    eventId: newEventId(),
    payload: payloadOf('session.deleted', deletedData(config, { scopeId, projectId, sessionId, title: null }), now),
  }));
  await enqueueWebhookEvents(tx, { type: 'session.deleted', scopeId, projectId }, events);
}

type ShareFacts = Pick<ShareState, 'id' | 'ownerId' | 'projectId' | 'sessionId' | 'title' | 'audience' | 'expiresAt' | 'createdBy'>;

/** `share.created` / `share.revoked`: never the link itself, which opens the snapshot to whoever holds it. */
export function shareChanged(tx: Tx, config: Base, type: 'share.created' | 'share.revoked', s: ShareFacts): Promise<void> {
  return record(tx, type, [s.ownerId], s.projectId, {
    shareId: s.id,
    projectId: s.projectId,
    sessionId: s.sessionId,
    title: s.title,
    audience: s.audience,
    expiresAt: s.expiresAt?.toISOString() ?? null,
    createdBy: s.createdBy,
    consoleUrl: consoleUrl(config, sessionPath(s.projectId, s.sessionId)),
  });
}

interface Owner {
  ownerType: 'user' | 'team';
  ownerId: string;
}

/** `project.moved`: to the webhooks of the owner it left and of the one it joined. */
export function projectMoved(tx: Tx, config: Base, p: { projectId: string; name: string; from: Owner; to: Owner }): Promise<void> {
  return record(tx, 'project.moved', [p.from.ownerId, p.to.ownerId], p.projectId, {
    projectId: p.projectId,
    name: p.name,
    from: { type: p.from.ownerType, id: p.from.ownerId },
    to: { type: p.to.ownerType, id: p.to.ownerId },
    consoleUrl: consoleUrl(config, projectPath(p.projectId)),
  });
}

/** `member.added` / `member.removed`: to the team's webhooks (its admins'). */
export function memberChanged(
  tx: Tx,
  config: Base,
  type: 'member.added' | 'member.removed',
  m: { teamId: string; userId: string; role: string },
): Promise<void> {
  return record(tx, type, [m.teamId], null, { teamId: m.teamId, userId: m.userId, role: m.role, consoleUrl: consoleUrl(config, '/settings/teams') });
}
