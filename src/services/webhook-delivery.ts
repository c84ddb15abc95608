/**
 * The webhook delivery worker (docs/webhooks.md). It claims due deliveries with a lease (no
 * connection is held while a receiver is waited on), checks the target's addresses again
 * (webhook-targets.ts) and POSTs the stored body with node:http(s), signed per attempt:
 *
 * - 2xx: delivered. 410: the webhook is disabled. Anything else, redirects included (never
 *   followed), a timeout or a refused address: tried again after the next delay of
 *   WEBHOOK_RETRY_DELAYS_S (about a day in all by default), then failed.
 * - At most PER_WEBHOOK attempts of one webhook and IN_FLIGHT in all run at once per process,
 *   each cut off after WEBHOOK_TIMEOUT_S, so a slow receiver holds up only its own deliveries.
 * - An attempt that never reports (its process died) is claimed again when its lease is over.
 */
import http from 'node:http';
import https from 'node:https';
import { inTransaction } from '../data/transaction';
import { claimDeliveries, disableWebhook, finishAttempt, type AttemptOutcome, type ClaimedDelivery } from '../data/webhooks';
import { retryDelayS, webhookSignature } from '../domain/webhooks';
import type { Deps } from './context';
import { resolveTarget, TargetRefused, type Target } from './webhook-targets';

const PER_WEBHOOK = 2;
const IN_FLIGHT = 16;
const POLL_MS = 1000;
/**
 * While claiming fails (the database unreachable or refusing), each poll waits twice as long as
 * the one before, up to this: an outage is logged a few times a minute, not every second. A
 * webhook written meanwhile still asks for a poll at once.
 */
const FAILING_POLL_MAX_MS = 30_000;
/** At most this much of a receiver's answer is read (then dropped). */
const ANSWER_BYTES = 64 * 1024;

interface Answer {
  status: number;
}

/** One POST to the checked address (never a name resolved again), with the URL's host as Host and TLS name. */
function post(target: Target, headers: Record<string, string>, body: string, timeoutMs: number, signal: AbortSignal): Promise<Answer> {
  const { url, address } = target;
  const secure = url.protocol === 'https:';
  const options: https.RequestOptions = {
    method: 'POST',
    host: address,
    port: url.port || (secure ? 443 : 80),
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, host: url.host, 'content-length': String(Buffer.byteLength(body)) },
    agent: false,
    timeout: timeoutMs,
    signal,
    ...(secure ? { servername: url.hostname.replace(/^\[(.*)\]$/, '$1') } : {}),
  };
  return new Promise<Answer>((resolve, reject) => {
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    const req = (secure ? https : http).request(options, (res) => {
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > ANSWER_BYTES) res.destroy();
      });
      const done = () => {
        clearTimeout(deadline);
        resolve({ status: res.statusCode ?? 0 });
      };
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on('error', (err) => {
      clearTimeout(deadline);
      reject(err);
    });
    req.end(body);
  });
}

/** Runs the worker until `stop()`; `stop()` cuts off attempts in flight (their leases bring them back). */
export function startWebhookWorker(deps: Deps): { stop(): Promise<void> } {
  const { config, db, logger } = deps;
  const busy = new Map<string, number>();
  const running = new Set<Promise<void>>();
  const abort = new AbortController();
  let timer: NodeJS.Timeout | null = null;
  let polling = false;
  let again = false;
  let stopped = false;
  /** Polls in a row whose claiming failed. */
  let failures = 0;
  // Longer than an attempt can take: the resolution and the request are each cut off after the timeout.
  const leaseS = config.webhookTimeoutS * 2 + 5;

  const schedule = (ms: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void poll(), ms);
  };

  async function attempt(d: ClaimedDelivery): Promise<void> {
    let outcome: AttemptOutcome;
    const started = Date.now();
    if (d.disabled || !d.mayRead) {
      outcome = { status: 'skipped', responseStatus: null, durationMs: null, error: d.disabled ? 'webhook disabled' : 'its owner can no longer read this' };
    } else {
      let status: number | null = null;
      let error: string | null = null;
      try {
        const target = await resolveTarget(deps, d.url, config.webhookTimeoutS * 1000);
        const timestamp = Math.floor(Date.now() / 1000);
        const headers = {
          'content-type': 'application/json',
          'user-agent': 'SessionArchive-Webhooks/1',
          'webhook-id': d.eventId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': webhookSignature(d.secret, d.eventId, timestamp, d.payload),
        };
        status = (await post(target, headers, d.payload, config.webhookTimeoutS * 1000, abort.signal)).status;
        if (status >= 300 && status < 400) error = `redirect (${status}) not followed`;
        else if (status < 200 || status >= 300) error = `answered ${status}`;
      } catch (err) {
        if (stopped) return; // cut off by stop(): the lease brings it back
        error = err instanceof TargetRefused ? err.message : `could not deliver: ${err instanceof Error ? err.message : String(err)}`;
      }
      const durationMs = Date.now() - started;
      if (status !== null && status >= 200 && status < 300) outcome = { status: 'delivered', responseStatus: status, durationMs, error: null };
      else if (status === 410) outcome = { status: 'failed', responseStatus: status, durationMs, error: 'answered 410 Gone: webhook disabled' };
      else {
        const retryInS = retryDelayS(config.webhookRetryDelaysS, d.attempts);
        outcome = { status: retryInS === null ? 'failed' : 'pending', responseStatus: status, durationMs, error, ...(retryInS === null ? {} : { retryInS }) };
      }
    }
    // A 410's outcome and the webhook's disabling commit together: nobody sees one without the other.
    await inTransaction(db, async (tx) => {
      if ((await finishAttempt(tx, d, outcome)) && outcome.responseStatus === 410) await disableWebhook(tx, d.webhookId, 'The receiver answered 410 Gone');
    });
  }

  function launch(d: ClaimedDelivery): void {
    busy.set(d.webhookId, (busy.get(d.webhookId) ?? 0) + 1);
    const p = attempt(d)
      .catch((err: unknown) => logger.error({ err, msg: 'webhook delivery failed', deliveryId: d.id }))
      .finally(() => {
        const n = (busy.get(d.webhookId) ?? 1) - 1;
        if (n > 0) busy.set(d.webhookId, n);
        else busy.delete(d.webhookId);
        running.delete(p);
        schedule(0);
      });
    running.add(p);
  }

  const nextPoll = () => (failures === 0 ? POLL_MS : Math.min(FAILING_POLL_MAX_MS, POLL_MS * 2 ** failures));

  async function poll(): Promise<void> {
    if (stopped) return;
    if (polling) {
      again = true;
      return;
    }
    polling = true;
    try {
      do {
        again = false;
        const room = IN_FLIGHT - running.size;
        if (room <= 0) break;
        const claimed = await claimDeliveries(db.pool, { limit: room, perWebhook: PER_WEBHOOK, busy, leaseS });
        for (const d of claimed) launch(d);
        if (claimed.length > 0 && claimed.length === room) again = true;
      } while (again && !stopped);
      failures = 0;
    } catch (err) {
      failures++;
      logger.error({ err, msg: 'webhook worker: claiming failed', nextPollMs: nextPoll() });
    } finally {
      polling = false;
      schedule(nextPoll());
    }
  }

  const off = db.signals.webhooksWritten.on(() => schedule(0));
  schedule(0);
  return {
    async stop() {
      stopped = true;
      off();
      if (timer) clearTimeout(timer);
      abort.abort();
      await Promise.allSettled([...running]);
    },
  };
}
