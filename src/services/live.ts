/**
 * Live session changes for one subscriber: the access rule applied to every change as it comes.
 *
 * A change is delivered when its session's owner scope is one the subscriber reads now. The
 * subscriber's team memberships are read again (on the primary) at most every SCOPES_FRESH_MS, so
 * a member removed from a team stops hearing of its sessions within that time; the session itself
 * is read on the primary, so a replica that has not applied the write yet cannot hide it. The
 * credential the stream was opened with is checked again with the memberships: a revoked key, a
 * signed-out or idle-expired browser session or a disabled account ends the stream before anything more is
 * delivered.
 */
import { keyWithUser } from '../data/api-keys';
import { browserSessionWithUser } from '../data/browser-sessions';
import type { SessionChangeEvent } from '../data/signal';
import type { SessionRow } from '../domain/session-row';
import { AppError } from '../errors';
import type { SessionEventHub } from '../live/session-events';
import { readableScopes, requireReadableProject, requireReadableSession } from './access';
import { SESSION_IDLE_MS } from './browser-sessions';
import type { Ctx } from './context';

/** How old the subscriber's memberships may be when a change is checked against them. */
const SCOPES_FRESH_MS = 500;
/** Changes waiting for a slow reader; past this the oldest are dropped (a list refetches anyway). */
const MAX_WAITING = 1000;

export interface SessionChange {
  kind: SessionChangeEvent['kind'];
  projectId: string;
  sessionId: string;
  /** The session as it is now; null when deleted. */
  session: SessionRow | null;
  at: string;
}

/**
 * The caller as a new request would see them: memberships read again, reads on the primary. A
 * stream lives long, so nothing read with its credential or through a replica is reused.
 */
export function freshContext(ctx: Ctx): Ctx {
  const { memberships: _read, ...user } = ctx.user;
  return { deps: { ...ctx.deps, db: { ...ctx.deps.db, reads: ctx.deps.db.writes } }, user, log: ctx.log };
}

/** Whether the credential a stream was opened with still signs its caller in. */
async function stillSignedIn(ctx: Ctx): Promise<boolean> {
  const { user } = ctx;
  const db = ctx.deps.db.writes;
  const now = Date.now();
  if (user.credentialExpiresAt && user.credentialExpiresAt.getTime() <= now) return false;
  if (user.sessionTokenHash) {
    const session = await browserSessionWithUser(db, user.sessionTokenHash);
    return !!session && session.userId === user.id && !session.disabledAt && now - session.lastUsedAt.getTime() < SESSION_IDLE_MS;
  }
  if (user.keyId) {
    const key = await keyWithUser(db, user.keyId);
    return !!key && key.userId === user.id && !key.revokedAt && !key.disabledAt && !(key.expiresAt && key.expiresAt.getTime() <= now);
  }
  return true;
}

class ChangeStream implements AsyncIterableIterator<SessionChange> {
  private readonly queue: SessionChange[] = [];
  private waiting: ((r: IteratorResult<SessionChange>) => void) | null = null;
  private done = false;
  private chain: Promise<void> = Promise.resolve();
  private scopes: { at: number; set: Set<string> } | null = null;
  private readonly off: () => void;

  constructor(
    private readonly ctx: Ctx,
    hub: SessionEventHub,
    private readonly projectId: string | null,
  ) {
    this.off = hub.listen((event) => {
      if (this.projectId !== null && event.projectId !== this.projectId) return;
      // One change at a time, in the order they were heard.
      this.chain = this.chain
        .then(() => this.consider(event))
        .catch((err: unknown) => this.ctx.log.warn({ err: { message: (err as Error).message }, msg: 'live change not delivered' }));
    });
  }

  private async readable(scope: string): Promise<boolean> {
    if (!this.scopes || Date.now() - this.scopes.at > SCOPES_FRESH_MS) {
      if (!(await stillSignedIn(this.ctx))) {
        await this.return();
        return false;
      }
      this.scopes = { at: Date.now(), set: new Set(await readableScopes(freshContext(this.ctx))) };
    }
    return this.scopes.set.has(scope);
  }

  private async consider(event: SessionChangeEvent): Promise<void> {
    if (this.done || !(await this.readable(event.scope))) return;
    let session: SessionRow | null = null;
    if (event.kind !== 'DELETED') {
      try {
        session = await requireReadableSession(freshContext(this.ctx), event.projectId, event.sessionId);
      } catch (err) {
        // Deleted or moved since: its own change follows.
        if (err instanceof AppError && (err.code === 'NOT_FOUND' || err.code === 'FORBIDDEN')) return;
        throw err;
      }
    }
    this.push({ kind: event.kind, projectId: event.projectId, sessionId: event.sessionId, session, at: new Date(event.at).toISOString() });
  }

  private push(change: SessionChange): void {
    if (this.done) return;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w({ value: change, done: false });
      return;
    }
    this.queue.push(change);
    if (this.queue.length > MAX_WAITING) this.queue.shift();
  }

  next(): Promise<IteratorResult<SessionChange>> {
    const change = this.queue.shift();
    if (change) return Promise.resolve({ value: change, done: false });
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<SessionChange>> {
    this.done = true;
    this.off();
    this.queue.length = 0;
    this.waiting?.({ value: undefined, done: true });
    this.waiting = null;
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<SessionChange> {
    return this;
  }
}

/**
 * Changes to the sessions the caller may read, from now on; with `projectId`, that project's only
 * (a project the caller cannot read: 403, unknown: 404, before anything is heard).
 */
export async function sessionChanges(ctx: Ctx, hub: SessionEventHub, projectId: string | null): Promise<AsyncIterableIterator<SessionChange>> {
  if (projectId !== null) await requireReadableProject(freshContext(ctx), projectId);
  return new ChangeStream(ctx, hub, projectId);
}
