/**
 * GraphQL operation usage, for schema review (docs/graphql.md): the service counts each operation
 * per client and UTC day, with the schema coordinates it touches, so that `schema:check --usage`
 * can say whether a breaking change breaks anyone.
 *
 * Counting costs a Map update per request: counts gather in memory and are added to the database
 * every few seconds (and when the service stops), in one batch, so several instances add to the
 * same rows. What an operation touches is worked out once per distinct operation text (a bounded
 * cache). A flush that fails is logged and its counts dropped: usage is a statistic, never worth
 * holding memory or a request for.
 */
import { AppError, invalid } from '../errors';
import { addOperationCounts, dropOperationDaysBefore, operationUsageSince, type OperationCount } from '../data/graphql-usage';
import type { Logger } from '../logger';
import type { Ctx, Deps } from './context';

/** How often gathered counts go to the database. */
const FLUSH_MS = 5_000;
/** Distinct (operation, client, day) entries gathered between flushes; beyond it, new ones are not counted until the next flush. */
const MAX_PENDING = 10_000;
/** The longest window `GET /api/v1/graphql/usage?days=` reads; older days are dropped. */
const MAX_USAGE_DAYS = 365;
/** A client name as stored: printable ASCII, at most 64 characters. */
const CLIENT_NAME = /^[\x21-\x7e][\x20-\x7e]{0,63}$/;

/** The client a request names (`graphql-client-name`, else `apollographql-client-name`), or `unknown`. */
export function clientNameOf(header: (name: string) => string | undefined): string {
  for (const h of ['graphql-client-name', 'apollographql-client-name']) {
    const name = header(h)?.trim();
    if (name && CLIENT_NAME.test(name)) return name;
  }
  return 'unknown';
}

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

export interface OperationUsageRecorder {
  /** Counts one run of an operation (its id, name and the coordinates it touches) by a client. */
  record(op: { id: string; name: string | null; coordinates: readonly string[] }, client: string): void;
  /** Adds what was gathered to the database now. */
  flush(): Promise<void>;
  /** Stops the timer and flushes. */
  stop(): Promise<void>;
}

/**
 * `periodic: false` (WORKERS_ENABLED=false: no background work in this process) adds the counts
 * only when usage is read and when the service stops.
 */
export function operationUsageRecorder(deps: Pick<Deps, 'db'>, log: Logger, { periodic }: { periodic: boolean }): OperationUsageRecorder {
  let pending = new Map<string, OperationCount>();
  let flushing: Promise<void> = Promise.resolve();
  let lastPrunedDay = '';

  const flush = (): Promise<void> => {
    if (!pending.size) return flushing;
    const batch = [...pending.values()];
    pending = new Map();
    flushing = flushing
      .then(async () => {
        await addOperationCounts(deps.db.writes, batch);
        const today = dayOf(new Date());
        if (today !== lastPrunedDay) {
          lastPrunedDay = today;
          await dropOperationDaysBefore(deps.db.writes, dayOf(new Date(Date.now() - (MAX_USAGE_DAYS + 1) * 86_400_000)));
        }
      })
      .catch((err: unknown) => log.warn({ err: err instanceof Error ? err.message : String(err), dropped: batch.length }, 'graphql usage: counts not saved'));
    return flushing;
  };
  const timer = periodic ? setInterval(() => void flush(), FLUSH_MS) : null;
  timer?.unref();

  return {
    record(op, client) {
      const now = new Date();
      const day = dayOf(now);
      const key = `${op.id}\n${client}\n${day}`;
      const seen = pending.get(key);
      if (seen) {
        seen.count++;
        seen.lastSeen = now;
        return;
      }
      if (pending.size >= MAX_PENDING) return;
      pending.set(key, { id: op.id, name: op.name, coordinates: JSON.stringify(op.coordinates), client, day, count: 1, lastSeen: now });
    },
    flush,
    async stop() {
      if (timer) clearInterval(timer);
      await flush();
    },
  };
}

interface OperationUsage {
  id: string;
  name: string | null;
  client: string;
  count: number;
  lastSeen: Date;
  coordinates: string[];
}

/** Runs per operation and client over the last `days` UTC days (today included); instance administrators only. */
export async function operationUsage(ctx: Ctx, daysParam: unknown): Promise<OperationUsage[]> {
  if (ctx.user.role !== 'admin') throw new AppError('FORBIDDEN', 'Only instance administrators can read GraphQL usage');
  const days = daysParam === undefined ? 30 : Number(daysParam);
  if (typeof daysParam === 'object' || !Number.isInteger(days) || days < 1 || days > MAX_USAGE_DAYS) {
    throw invalid(`days must be an integer from 1 to ${MAX_USAGE_DAYS}`);
  }
  const from = dayOf(new Date(Date.now() - (days - 1) * 86_400_000));
  const rows = await operationUsageSince(ctx.deps.db.reads, from);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    client: r.client,
    count: Number(r.count),
    lastSeen: r.lastSeen,
    coordinates: JSON.parse(r.coordinates) as string[],
  }));
}
