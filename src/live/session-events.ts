/**
 * Session changes for live subscriptions (GraphQL `Subscription.sessionsChanged`), across
 * instances.
 *
 * Every committed session write announces itself on the data layer's `sessionChanged` channel.
 * Without Redis that is the whole story: this process's subscribers hear it. With `REDIS_URL`, the
 * hub publishes each change on one Redis channel per namespace and every instance (this one too)
 * hears it from there, so a subscriber on instance B hears an upload made through instance A.
 *
 * The hub also counts open streams per user (at most STREAMS_PER_USER): in this process, and with
 * Redis across instances, in a sorted set per user whose entries expire unless their stream renews
 * them (so a killed instance's streams stop counting within STREAM_LEASE_MS).
 */
import crypto from 'node:crypto';
import Redis from 'ioredis';
import type { DataSignals, SessionChangeEvent } from '../data/signal';
import type { Logger } from '../logger';

export const STREAMS_PER_USER = 10;
/** How long a stream's entry in Redis lives without renewal. */
const STREAM_LEASE_MS = 60_000;
/** How often an open stream renews its entry. */
const STREAM_RENEW_MS = 20_000;

export interface SessionEventHub {
  /** Hears every change (of every scope) until the returned function is called. */
  listen(fn: (event: SessionChangeEvent) => void): () => void;
  /** Opens a stream for the user: a function that closes it, or null when the user has STREAMS_PER_USER open. */
  openStream(userId: string): Promise<(() => void) | null>;
  stop(): Promise<void>;
}

const isEvent = (v: unknown): v is SessionChangeEvent => {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  return (
    (e.kind === 'CREATED' || e.kind === 'UPDATED' || e.kind === 'DELETED') &&
    typeof e.scope === 'string' &&
    typeof e.projectId === 'string' &&
    typeof e.sessionId === 'string' &&
    typeof e.at === 'number'
  );
};

export function createSessionEventHub(opts: { signals: DataSignals; redisUrl: string | null; namespace: string; logger: Logger }): SessionEventHub {
  const listeners = new Set<(event: SessionChangeEvent) => void>();
  const dispatch = (event: SessionChangeEvent) => {
    for (const fn of listeners) {
      try {
        fn(event);
      } catch (err) {
        opts.logger.warn({ err, msg: 'live subscriber failed on an event' });
      }
    }
  };
  const open = new Map<string, number>();
  const local = {
    take(userId: string): boolean {
      const n = open.get(userId) ?? 0;
      if (n >= STREAMS_PER_USER) return false;
      open.set(userId, n + 1);
      return true;
    },
    give(userId: string): void {
      const n = (open.get(userId) ?? 1) - 1;
      if (n <= 0) open.delete(userId);
      else open.set(userId, n);
    },
  };

  if (!opts.redisUrl) {
    const off = opts.signals.sessionChanged.on(dispatch);
    return {
      listen: (fn) => (listeners.add(fn), () => listeners.delete(fn)),
      openStream: (userId) => Promise.resolve(local.take(userId) ? () => local.give(userId) : null),
      stop: () => Promise.resolve(void off()),
    };
  }

  const channel = `${opts.namespace}:session-changes`;
  const streamsKey = (userId: string) => `${opts.namespace}:live-streams:${userId}`;
  const redisOptions = { maxRetriesPerRequest: 1, commandTimeout: 1000, lazyConnect: false };
  const pub = new Redis(opts.redisUrl, { ...redisOptions, enableOfflineQueue: false });
  // A subscriber connection queues its SUBSCRIBE until it is connected, and subscribes again after a reconnect.
  const sub = new Redis(opts.redisUrl, { ...redisOptions, enableOfflineQueue: true });
  for (const r of [pub, sub]) r.on('error', (err: Error) => opts.logger.warn({ err: { message: err.message }, msg: 'live events: Redis error' }));
  void sub.subscribe(channel).catch((err: Error) => opts.logger.error({ err: { message: err.message }, msg: 'live events: could not subscribe' }));
  sub.on('message', (_channel: string, message: string) => {
    let event: unknown;
    try {
      event = JSON.parse(message);
    } catch {
      return;
    }
    if (isEvent(event)) dispatch(event);
  });
  const off = opts.signals.sessionChanged.on((event) => {
    pub.publish(channel, JSON.stringify(event)).catch((err: Error) => {
      // Redis is away: this instance's subscribers still hear their own instance's writes.
      opts.logger.warn({ err: { message: err.message }, msg: 'live events: publish failed; delivered on this instance only' });
      dispatch(event);
    });
  });

  return {
    listen: (fn) => (listeners.add(fn), () => listeners.delete(fn)),
    async openStream(userId) {
      if (!local.take(userId)) return null;
      const key = streamsKey(userId);
      const id = crypto.randomUUID();
      try {
        const now = Date.now();
        const [, , [, count]] = (await pub
          .multi()
          .zremrangebyscore(key, 0, now)
          .zadd(key, now + STREAM_LEASE_MS, id)
          .zcard(key)
          .pexpire(key, STREAM_LEASE_MS)
          .exec()) as [unknown, unknown, [unknown, number], unknown];
        if (count > STREAMS_PER_USER) {
          await pub.zrem(key, id);
          local.give(userId);
          return null;
        }
      } catch (err) {
        // Redis is away: this instance's own count still holds.
        opts.logger.warn({ err: { message: (err as Error).message }, msg: 'live events: stream count unavailable; counted on this instance only' });
      }
      const renew = setInterval(() => {
        const at = Date.now() + STREAM_LEASE_MS;
        pub
          .multi()
          .zadd(key, at, id)
          .pexpire(key, STREAM_LEASE_MS)
          .exec()
          .catch(() => undefined);
      }, STREAM_RENEW_MS);
      renew.unref();
      let closed = false;
      return () => {
        if (closed) return;
        closed = true;
        clearInterval(renew);
        local.give(userId);
        pub.zrem(key, id).catch(() => undefined);
      };
    },
    async stop() {
      off();
      listeners.clear();
      await Promise.all([pub.quit().catch(() => pub.disconnect()), sub.quit().catch(() => sub.disconnect())]);
    },
  };
}
