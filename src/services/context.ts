import type { Offload } from '../offload';
import type { Config } from '../config';
import type { DbHandles } from '../db/client';
import type { Snapshot, Sql } from '../data/sql';
import type { Logger } from '../logger';
import type { WorkGuard } from './work-guard';
import type { SearchPort } from '../search/engine/port';

/** Process-wide dependencies, built once in main.ts (or by a test). */
export interface Deps {
  config: Config;
  db: DbHandles;
  logger: Logger;
  search: SearchPort;
  /** CPU work on large inputs off the event loop; absent → inline (src/offload). */
  offload?: Offload;
  /** Runs `fn` (a request's handling) with this service's content store (src/data/content-store); absent → the process's. */
  withContent?: <T>(fn: () => T) => T;
  /** Resolves a webhook target's host name to its addresses; absent → the system resolver (tests put a changing one here). */
  resolveHost?: (hostname: string) => Promise<string[]>;
}

export interface AuthUser {
  id: string;
  /** The API key (or device token row) that authenticated the request; null for a browser session. */
  keyId: string | null;
  /**
   * When the credential itself ends, when that is sooner than its key row says: a device access
   * token's hour (its device session lasts years). What is derived from the request's credential
   * ends no later.
   */
  credentialExpiresAt?: Date;
  /** Absent in contexts built outside a request (CLI, benches): never admin. */
  role?: 'admin' | 'member';
  /** True for a read-only key (scopes ["read"]): every write is refused (403 `This key is read-only`). */
  readOnly?: boolean;
  /** An MCP connector's access token: the resource (RFC 8707) its grant is for (/mcp checks it names itself). */
  resource?: string;
  /** The browser session (sha256 of its cookie token) that authenticated the request, if any. */
  sessionTokenHash?: string;
  /**
   * The user's team memberships as read with the credential in this request (`teamId:role`, comma
   * separated; '' for none). Absent: the access rule reads them itself, once per request.
   */
  memberships?: string;
}

/**
 * What a service call gets from a signed-in caller: who is asking (the user, their role and teams,
 * the credential), and where to log. Every service function takes a context first and decides
 * every rule itself (ownership, roles, admin-only, switches); doors only translate.
 */
export interface Ctx {
  deps: Deps;
  user: AuthUser;
  log: Logger;
  /** The request's write guard (the database watchdog aborts it with its 503). */
  guard?: WorkGuard;
}

/**
 * The same context reading through `reads` (a snapshot): every service read made with it sees
 * one committed version of the database.
 */
export function withReads(ctx: Ctx, reads: Sql): Ctx {
  const deps: Deps = { ...ctx.deps, db: { ...ctx.deps.db, reads } };
  return Object.create(ctx, { deps: { value: deps, enumerable: true } }) as Ctx;
}

/**
 * The operator of the service: the admin CLI (and set-up code acting as it). No user and no team;
 * it manages accounts, keys and teams of anyone, and never reads sessions through the access rule.
 * It carries what it has of the configuration (the CLI: all of it; set-up code: the signing secret).
 */
export interface OperatorCtx {
  caller: 'operator';
  deps: { db: DbHandles; config: Partial<Config> };
}

/** Someone not signed in: sign-in, sign-up, first-run setup, reset links, device login. */
export interface PublicCtx {
  caller: 'public';
  deps: { db: DbHandles; config: Config };
}

/** Any caller: a user (`Ctx`), the operator or the public. */
export type AnyCtx = Ctx | OperatorCtx | PublicCtx;

export const operatorCtx = (db: DbHandles, config: Partial<Config> = {}): OperatorCtx => ({ caller: 'operator', deps: { db, config } });
export const publicCtx = (deps: { db: DbHandles; config: Config }): PublicCtx => ({ caller: 'public', deps: { db: deps.db, config: deps.config } });

/** A signed-in user's context (the others carry no `user`). */
export const isUserCtx = (ctx: AnyCtx): ctx is Ctx => 'user' in ctx;

/**
 * The dependencies of one user's request: with a read replica, their reads follow that user
 * (src/db/replica.ts: the replica once it has applied the user's last write, else the primary).
 */
export function depsFor(deps: Deps, userId: string): Deps {
  return deps.db.replica ? { ...deps, db: deps.db.forUser(userId) } : deps;
}

/**
 * The context for an operation that reads one snapshot once it knows it only reads (a GraphQL
 * query): its reads go to the plain read handle until `useSnapshot()`, then to one snapshot taken
 * then; `release()` gives the snapshot back.
 */
export function withSnapshotOnDemand(ctx: Ctx): { ctx: Ctx; useSnapshot(): void; release(): Promise<void> } {
  const plain = ctx.deps.db.reads;
  let snapshot: Snapshot | null = null;
  const reads: Sql = {
    isSql: true,
    query: (q, ...v) => (snapshot ?? plain).query(q, ...v),
    execute: (q, ...v) => (snapshot ?? plain).execute(q, ...v),
  };
  return {
    ctx: withReads(ctx, reads),
    useSnapshot() {
      snapshot ??= ctx.deps.db.lazySnapshot();
    },
    async release() {
      await snapshot?.release();
    },
  };
}

/** Runs `fn` with the context reading one snapshot (one committed version), released whatever happens. */
export async function onSnapshot<T>(ctx: Ctx, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  const snap = ctx.deps.db.lazySnapshot();
  try {
    return await fn(withReads(ctx, snap));
  } finally {
    await snap.release();
  }
}
