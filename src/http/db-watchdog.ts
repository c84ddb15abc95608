import type { NextFunction, Request, Response } from 'express';
import * as mariadb from 'mariadb';
import type { Config } from '../config';
import { isServerFull } from '../data/errors';
import { connectionOptions } from '../db/client';
import { AppError, MESSAGES } from '../errors';
import type { Logger } from '../logger';
import { WorkGuard } from '../services/work-guard';
import { sendError } from './errors';
import { siteRouteOf } from './site-routes';

/** How often the database is pinged while requests are in flight (or while it is down). */
const TICK_MS = 250;
/** A ping or connect unanswered this long (of this process's own running time) → unreachable. */
const ANSWER_WITHIN_MS = 1000;
/** The monitor's connection is dropped after this long without requests. */
const IDLE_CLOSE_MS = 5000;

export interface Watched {
  req: Request;
  res: Response;
  guard: WorkGuard;
  /** Its index in InFlight's array while it is there, else -1. */
  slot: number;
}

/**
 * The requests in flight, in an array where each entry knows its index: added at the end, removed
 * by moving the last entry into its place, so a request that has answered is no longer referenced
 * from here at all (what stays alive under load: docs/benchmarks.md, "Storage and memory").
 */
export class InFlight {
  private readonly items: Watched[] = [];

  get size(): number {
    return this.items.length;
  }

  add(entry: Watched): void {
    entry.slot = this.items.length;
    this.items.push(entry);
  }

  delete(entry: Watched): void {
    const i = entry.slot;
    if (i < 0 || this.items[i] !== entry) return;
    const last = this.items.pop()!;
    if (last !== entry) {
      this.items[i] = last;
      last.slot = i;
    }
    entry.slot = -1;
  }

  /** The entries now (a copy: answering one removes it). */
  list(): Watched[] {
    return [...this.items];
  }
}

/**
 * Tells "the database is unreachable" from "the database is busy" (503 only for the
 * first; a healthy database under a burst is waited for). While requests are in flight, a
 * connection of its own, outside the pools, pings the database every TICK_MS. The database is
 * unreachable when a ping or a fresh connection fails (refused, reset; not a server that answers
 * it has too many connections, which is busy) or stays unanswered for
 * ANSWER_WITHIN_MS — counted only once this process has read its pending I/O (the verdict waits
 * for setImmediate, which runs after the poll phase), so a stalled event loop or saturated CPUs
 * cannot fake an outage. Pool saturation is never consulted: a request waiting for a connection
 * just waits. A frozen (SIGSTOP) or dead server is thus detected within ~1.5 s.
 *
 * When the database becomes unreachable, every watched request that has not answered yet is
 * answered 503 and aborted (its transaction rolls back instead of committing, WorkGuard); a
 * request whose COMMIT is already on its way is left to learn the outcome. New requests are
 * answered 503 at once until a fresh connection succeeds again (no restart needed).
 */
export class DbMonitor {
  private state: 'up' | 'down' = 'up';
  private conn: mariadb.Connection | null = null;
  /**
   * The outstanding connect or ping and how long it has waited, counted in ticks of this
   * process: each tick adds the time since the last one, but at most 2 ticks' worth, so time this
   * process spent blocked or descheduled (its own synchronous work, busy cores) does not count.
   */
  private pending: { id: number; waited: number } | null = null;
  private lastTick = Date.now();
  private seq = 0;
  /** Bumped whenever the connection is dropped: a connect that ends after that is stale. */
  private epoch = 0;
  private timer: NodeJS.Timeout | null = null;
  private lastActive = Date.now();
  private readonly watched = new InFlight();

  constructor(
    private readonly options: mariadb.ConnectionConfig,
    private readonly logger: Logger,
    /** How a connection is made (a test watches the driver's connections through it). */
    private readonly createConnection: (options: mariadb.ConnectionConfig) => Promise<mariadb.Connection> = mariadb.createConnection,
  ) {}

  get reachable(): boolean {
    return this.state === 'up';
  }

  middleware() {
    return (req: Request, res: Response, next: NextFunction) => {
      // Routes answered without the database (liveness, metrics) are never held up.
      if (siteRouteOf(req)?.withoutDb) return next();
      if (this.state === 'down') {
        this.ensureTicking();
        return this.answer503(req, res);
      }
      const entry: Watched = { req, res, guard: new WorkGuard(), slot: -1 };
      req.guard = entry.guard;
      this.watched.add(entry);
      this.lastActive = Date.now();
      this.ensureTicking();
      res.once('close', () => this.watched.delete(entry));
      next();
    };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.dropConnection();
  }

  private answer503(req: Request, res: Response): void {
    if (res.headersSent) return;
    if (siteRouteOf(req)?.readiness) res.status(503).json({ status: 'not ready', reason: 'database unreachable' });
    else sendError(req, res, new AppError('SERVICE_UNAVAILABLE', MESSAGES.unavailable));
  }

  private ensureTicking(): void {
    if (this.timer) return;
    this.lastTick = Date.now();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
    this.tick();
  }

  private tick(): void {
    const now = Date.now();
    const sinceLast = Math.min(now - this.lastTick, 2 * TICK_MS);
    this.lastTick = now;
    if (this.watched.size > 0) this.lastActive = now;
    if (this.state === 'up' && this.watched.size === 0 && Date.now() - this.lastActive > IDLE_CLOSE_MS) {
      this.stop();
      return;
    }
    if (this.pending) {
      this.pending.waited += sinceLast;
      if (this.pending.waited < ANSWER_WITHIN_MS) return;
      const { id } = this.pending;
      // After the poll phase: an answer that arrived while this process was not running counts.
      setImmediate(() => {
        if (this.pending?.id === id) this.fail('no answer within 1 s');
      });
      return;
    }
    const id = ++this.seq;
    this.pending = { id, waited: 0 };
    const op = this.conn ? this.conn.ping() : this.connect();
    op.then(
      () => {
        if (this.pending?.id !== id) return;
        this.pending = null;
        this.succeed();
      },
      (err: unknown) => {
        if (this.pending?.id !== id) return;
        // Refused for having too many connections: the server answered, so it is reachable
        // (the pools' connections still work; a new one is tried at the next tick).
        if (isServerFull(err)) {
          this.pending = null;
          return this.succeed();
        }
        this.fail(err instanceof Error ? err.message : String(err));
      },
    );
  }

  private async connect(): Promise<void> {
    const epoch = this.epoch;
    const conn = await this.createConnection(this.options);
    conn.on('error', () => undefined);
    // Stopped (or given up on) while connecting: nobody would ever close this connection, and it
    // would keep the process alive.
    if (this.conn || epoch !== this.epoch) conn.destroy();
    else this.conn = conn;
  }

  private dropConnection(): void {
    this.epoch++;
    const c = this.conn;
    this.conn = null;
    this.pending = null;
    try {
      c?.destroy();
    } catch {
      /* already gone */
    }
  }

  private succeed(): void {
    if (this.state === 'down') this.logger.info({ msg: 'database reachable again' });
    this.state = 'up';
  }

  private fail(reason: string): void {
    this.dropConnection();
    if (this.state === 'up') this.logger.warn({ msg: 'database unreachable', reason });
    this.state = 'down';
    for (const w of this.watched.list()) {
      if (w.res.headersSent || w.res.writableEnded) continue;
      // A request whose commit is on its way waits for the commit's outcome instead.
      if (!w.guard.abort()) continue;
      this.answer503(w.req, w.res);
    }
  }
}

export function dbWatchdog(config: Config, logger: Logger): DbMonitor {
  // The driver's own connect timeout is only a backstop: the monitor's verdict is its own.
  return new DbMonitor({ ...connectionOptions(config.databaseUrl), connectTimeout: 10_000 }, logger);
}
