/**
 * A read replica (DATABASE_REPLICA_URL): reads made for a user go to the replica when it is
 * healthy and has applied that user's last write; everything else reads from the primary.
 *
 * - Read-your-writes: every write made for a user records the primary's GTID position right after
 *   it committed (`@@gtid_binlog_pos`), in this process and, with REDIS_URL, in Redis (every
 *   instance sees it). A read for that user whose position the replica is not known to have
 *   reached first waits on the replica with `MASTER_GTID_WAIT(position, budget)`; when the budget
 *   runs out, the read goes to the primary.
 * - Lag: a monitor samples the primary's position twice a second and reads the replica's
 *   (`@@gtid_slave_pos`); the lag is the age of the oldest primary position the replica has not
 *   reached yet (0 when it has reached the newest). A replica more than `maxLagMs` behind, one that
 *   cannot be reached, or one that has not yet reached any position sampled since start, is not
 *   read from at all.
 * - A statement that fails on the replica runs again on the primary: a dead replica costs time,
 *   never an error.
 */
import * as mariadb from 'mariadb';
import Redis from 'ioredis';
import { formatGtidPosition, gtidCovers, gtidEquals, gtidMax, parseGtidPosition, type GtidPosition } from './gtid';
import { snapshotOn, sqlOn, type Snapshot, type Sql } from '../data/sql';

export interface ReplicaOptions {
  /** The replica's connection URL (its database defaults to the primary's). */
  url: string;
  /** How long a read waits for the replica to apply the user's last write before it reads from the primary. */
  waitMs: number;
  /** Beyond this lag every read goes to the primary. */
  maxLagMs: number;
  /** Shares users' last write positions between instances. */
  redisUrl: string | null;
  /** Prefix of the Redis keys. */
  namespace: string;
  /** Told (at most once a minute per kind) when the replica or Redis misbehaves. */
  onProblem?: (msg: string, err?: unknown) => void;
}

/** Why a read went to the primary rather than the replica. */
type FallbackReason = 'down' | 'lagging' | 'starting' | 'wait_timeout' | 'error' | 'marks_unavailable';

interface ReplicaStatus {
  /** The last probe reached the replica (and no statement has failed there since). */
  up: boolean;
  /** Seconds the replica is behind the primary (from the last position it was seen to have applied); null before the first measure. */
  lagSeconds: number | null;
  /** Requests (one service context each) whose reads went to the replica. */
  replicaReads: number;
  /** Requests whose reads went to the primary although a replica is configured, by reason. */
  fallbacks: Record<FallbackReason, number>;
}

/** What a user-bound view needs of the primary. */
interface PrimaryHandles {
  /** The primary's read pool. */
  readPool: mariadb.Pool;
  /** Statements on the primary's write pool. */
  writes: Sql;
}

export interface Replica {
  readonly pool: mariadb.Pool;
  status(): ReplicaStatus;
  /** Reads for one user's request: routed, with a snapshot taken where the reads go. */
  router(userId: string): ReadRouter;
  /** After a write made for `userId` has committed: remembers the primary's position. */
  markWrite(userId: string): Promise<void>;
  /** Runs one probe now (tests; the monitor runs it on its own). */
  probe(): Promise<void>;
  close(): Promise<void>;
}

interface ReadRouter {
  reads: Sql;
  lazySnapshot(): Snapshot;
  /** This request has written: its later reads go to the primary. */
  wrote(): void;
}

const PROBE_MS = 500;
const PROBE_TIMEOUT_MS = 1000;
/** Redis keeps a user's last write position this long (far longer than any lag a replica is still read at). */
const MARK_TTL_S = 3600;
const MAX_SAMPLES = 10_000;
const PROBLEM_LOG_MS = 60_000;

/** Per domain: keep the furthest sequence number (a position recorded late never moves a mark back). */
const MERGE_SCRIPT = `
for i = 2, #ARGV, 3 do
  local cur = redis.call('HGET', KEYS[1], ARGV[i])
  local seq = tonumber(ARGV[i + 2])
  if not cur or tonumber(string.match(cur, '-(%d+)$')) < seq then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1] .. '-' .. ARGV[i + 2])
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1`;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

export function createReplica(primary: PrimaryHandles, options: ReplicaOptions, replicaPoolConfig: mariadb.PoolConfig): Replica {
  const pool = mariadb.createPool({
    ...replicaPoolConfig,
    // A replica that cannot be reached must cost a read little: it then goes to the primary.
    acquireTimeout: 2000,
    minimumIdle: 1,
    idleTimeout: 30,
  });
  pool.on('connection', (conn: unknown) => {
    const c = conn as { on?: (event: string, fn: (err: unknown) => void) => void };
    c.on?.('error', () => undefined);
  });
  const replicaSql = sqlOn(pool);
  const primaryReads = sqlOn(primary.readPool);

  const lastProblem = new Map<string, number>();
  const problem = (kind: string, msg: string, err?: unknown) => {
    const now = Date.now();
    if ((lastProblem.get(kind) ?? 0) + PROBLEM_LOG_MS > now) return;
    lastProblem.set(kind, now);
    options.onProblem?.(msg, err);
  };

  // --- The monitor: lag and health. ---
  let up = false;
  /** The primary writes a binary log (without one, its positions say nothing and no replica follows it). */
  let primaryLogs = true;
  let caughtUpOnce = false;
  let lagMs: number | null = null;
  /** The furthest position the replica is known to have applied. */
  let replicaPos: GtidPosition = new Map();
  /** Positions of the primary as sampled, oldest first, each with when it was first seen. */
  let samples: Array<{ at: number; pos: GtidPosition }> = [];
  let stopped = false;
  let probing: Promise<void> | null = null;

  async function probeOnce(): Promise<void> {
    const now = Date.now();
    let primaryPos: GtidPosition | null = null;
    try {
      const [row] = await withTimeout(
        primary.writes.query<{ p: string; b: unknown }>('SELECT @@global.gtid_binlog_pos AS p, @@global.log_bin AS b'),
        PROBE_TIMEOUT_MS,
        'primary probe',
      );
      primaryPos = parseGtidPosition(row?.p);
      primaryLogs = Number(row?.b) === 1;
      if (!primaryLogs) problem('no-binlog', 'the primary has no binary log, so no replica can follow it: every read goes to the primary');
    } catch {
      // The primary's own troubles are the watchdog's; the lag is measured again next time.
    }
    if (primaryPos) {
      const last = samples[samples.length - 1];
      if (!last || !gtidEquals(last.pos, primaryPos)) samples.push({ at: now, pos: primaryPos });
      if (samples.length > MAX_SAMPLES) samples.splice(1, 1);
    }
    try {
      const [row] = await withTimeout(replicaSql.query<{ r: string }>('SELECT @@global.gtid_slave_pos AS r'), PROBE_TIMEOUT_MS, 'replica probe');
      const pos = parseGtidPosition(row?.r);
      if (pos) replicaPos = gtidMax(replicaPos, pos);
      up = true;
    } catch (err) {
      up = false;
      problem('probe', 'database replica unreachable: reads go to the primary', err);
    }
    // Measured from the last position known applied, also while the replica cannot be reached.
    const firstBehind = samples.findIndex((s) => !gtidCovers(replicaPos, s.pos));
    if (firstBehind === -1) {
      if (samples.length) caughtUpOnce = true;
      samples = samples.slice(-1);
      if (samples.length) lagMs = 0;
    } else {
      if (firstBehind > 0) caughtUpOnce = true;
      samples = samples.slice(firstBehind);
      lagMs = Math.max(0, Date.now() - samples[0].at);
    }
    forgetCoveredMarks();
  }

  function probe(): Promise<void> {
    return (probing ??= probeOnce().finally(() => (probing = null)));
  }

  let timer: NodeJS.Timeout | null = null;
  const loop = () => {
    if (stopped) return;
    timer = setTimeout(() => void probe().finally(loop), PROBE_MS);
    timer.unref();
  };
  void probe().finally(loop);

  function health(): FallbackReason | null {
    if (!primaryLogs) return 'down';
    if (!up) return caughtUpOnce ? 'down' : 'starting';
    if (!caughtUpOnce) return 'starting';
    if (lagMs === null || lagMs > options.maxLagMs) return 'lagging';
    return null;
  }

  // --- Users' last write positions. ---
  const localMarks = new Map<string, { pos: GtidPosition; at: number }>();
  let redis: Redis | null = null;
  if (options.redisUrl) {
    redis = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1000, lazyConnect: false });
    redis.on('error', (err: Error) => problem('redis', `redis error (read replica marks): ${err.message}`));
  }
  const keyOf = (userId: string) => `${options.namespace}:gtid:${userId}`;

  function forgetCoveredMarks(): void {
    const old = Date.now() - MARK_TTL_S * 1000;
    for (const [userId, m] of localMarks) if (m.at < old || gtidCovers(replicaPos, m.pos)) localMarks.delete(userId);
  }

  async function markWrite(userId: string): Promise<void> {
    let pos: GtidPosition | null;
    try {
      const [row] = await primary.writes.query<{ p: string }>('SELECT @@global.gtid_binlog_pos AS p');
      pos = parseGtidPosition(row?.p);
    } catch (err) {
      problem('mark', 'could not read the primary GTID position after a write', err);
      return;
    }
    if (!pos || pos.size === 0) return;
    const seen = localMarks.get(userId);
    localMarks.set(userId, { pos: seen ? gtidMax(seen.pos, pos) : pos, at: Date.now() });
    if (redis) {
      const args: string[] = [];
      for (const [domain, g] of pos) args.push(String(domain), String(g.server), String(g.seq));
      try {
        await redis.eval(MERGE_SCRIPT, 1, keyOf(userId), String(MARK_TTL_S), ...args);
      } catch (err) {
        problem('redis-mark', 'could not share a write position through Redis', err);
      }
    }
  }

  /** The user's last write position, from this process and Redis; throws when Redis cannot tell. */
  async function markOf(userId: string): Promise<GtidPosition | null> {
    let pos = localMarks.get(userId)?.pos ?? null;
    if (redis) {
      const h = await redis.hgetall(keyOf(userId));
      for (const [domain, rest] of Object.entries(h)) {
        const p = parseGtidPosition(`${domain}-${rest}`);
        if (p) pos = pos ? gtidMax(pos, p) : p;
      }
    }
    return pos;
  }

  // --- Counting. ---
  let replicaReads = 0;
  const fallbacks: Record<FallbackReason, number> = { down: 0, lagging: 0, starting: 0, wait_timeout: 0, error: 0, marks_unavailable: 0 };

  function replicaFailed(err: unknown): void {
    up = false;
    fallbacks.error++;
    problem('read', 'a read failed on the database replica and ran on the primary', err);
  }

  /** Where one request's reads go: the replica once it has applied the user's last write, else the primary. */
  async function choose(userId: string): Promise<'replica' | 'primary'> {
    const unhealthy = health();
    if (unhealthy) {
      fallbacks[unhealthy]++;
      return 'primary';
    }
    let mark: GtidPosition | null;
    try {
      mark = await markOf(userId);
    } catch (err) {
      problem('redis-read', 'could not read write positions from Redis: reads go to the primary', err);
      fallbacks.marks_unavailable++;
      return 'primary';
    }
    if (!mark || gtidCovers(replicaPos, mark)) {
      replicaReads++;
      return 'replica';
    }
    try {
      const [row] = await withTimeout(
        replicaSql.query<{ w: unknown }>('SELECT MASTER_GTID_WAIT(?, ?) AS w', formatGtidPosition(mark), options.waitMs / 1000),
        options.waitMs + PROBE_TIMEOUT_MS,
        'replica wait',
      );
      if (row?.w !== null && Number(row?.w) === 0) {
        replicaPos = gtidMax(replicaPos, mark);
        replicaReads++;
        return 'replica';
      }
      fallbacks.wait_timeout++;
      return 'primary';
    } catch (err) {
      replicaFailed(err);
      return 'primary';
    }
  }

  function router(userId: string): ReadRouter {
    let wrote = false;
    let target: Promise<'replica' | 'primary'> | null = null;
    const where = async (): Promise<'replica' | 'primary'> => (wrote ? 'primary' : await (target ??= choose(userId)));
    const run = async <T>(fn: (sql: Sql) => Promise<T>): Promise<T> => {
      if ((await where()) === 'primary') return fn(primaryReads);
      try {
        return await fn(replicaSql);
      } catch (err) {
        replicaFailed(err);
        return fn(primaryReads);
      }
    };
    return {
      reads: {
        isSql: true,
        query: (sql, ...values) => run((s) => s.query(sql, ...values)),
        execute: (sql, ...values) => run((s) => s.execute(sql, ...values)),
      },
      lazySnapshot(): Snapshot {
        let opened: Promise<Snapshot> | null = null;
        const open = (): Promise<Snapshot> =>
          (opened ??= (async () => {
            if ((await where()) === 'replica') {
              const snap = snapshotOn(pool);
              try {
                await snap.query('SELECT 1');
                return snap;
              } catch (err) {
                await snap.release().catch(() => undefined);
                replicaFailed(err);
              }
            }
            return snapshotOn(primary.readPool);
          })());
        return {
          isSql: true,
          query: async (sql, ...values) => (await open()).query(sql, ...values),
          execute: async (sql, ...values) => (await open()).execute(sql, ...values),
          async release() {
            if (!opened) {
              opened = Promise.reject(new Error('snapshot already released'));
              opened.catch(() => undefined);
              return;
            }
            const snap = await opened.catch(() => null);
            await snap?.release();
          },
        };
      },
      wrote() {
        wrote = true;
      },
    };
  }

  return {
    pool,
    status: () => ({ up, lagSeconds: lagMs === null ? null : lagMs / 1000, replicaReads, fallbacks: { ...fallbacks } }),
    router,
    markWrite,
    probe,
    async close() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await probing?.catch(() => undefined);
      redis?.disconnect();
      await pool.end().catch(() => undefined);
    },
  };
}
