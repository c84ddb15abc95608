import crypto from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { unauthenticated } from './errors';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { routeOf } from './http/request-context';
import { SITE_ROUTES, siteRouteOf } from './http/site-routes';
import { rateLimitOf } from './api/route';
import type { AdmissionStats } from './http/admission';
import type { EngineStatus } from './search';
import { onSearch } from './search/engine/timing';
import type { EmbeddingStats } from './search/semantic/embedder';
import type { Replica } from './db/replica';
import { operatorCtx, type Deps } from './services/context';
import { outboxBacklog, outboxDeadCount } from './services/search-outbox';

/** Prometheus metrics of one app instance (its own Registry, so two apps in a process never clash). */
interface AppMetrics {
  registry: Registry;
  /** Called once per finished request (wired into requestContext, which passes the route it logged). */
  onRequestFinished: (req: Request, res: Response, seconds: number, route?: string) => void;
  observeSearch(seconds: number): void;
  /** GET /metrics (Prometheus text format). */
  router: Router;
  close(): void;
}

/** Constant-time comparison of `Authorization: Bearer <token>` with the expected token. */
function bearerIs(header: string | undefined, expected: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m) return false;
  const a = crypto.createHash('sha256').update(m[1]).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

/** The limit a 429 came from when the limiter did not name it: the operation's declared one. */
const rateLimitKind = (req: Request): string => {
  if (!req.user) return 'auth_failure';
  if (req.apiRoute) return rateLimitOf(req.apiRoute);
  const site = siteRouteOf(req)?.rateLimit;
  return site && site !== 'none' ? site : 'rest';
};

/** The failed-authentication limit's hooks /metrics uses when METRICS_TOKEN is set. */
interface MetricsAuthHooks {
  beforeAuth?: (req: Request) => Promise<void>;
  onAuthFailure?: (req: Request) => Promise<void>;
}

/** A gauge read on scrape from `count`, -1 when that fails or takes over a second (a scrape must not hang on a frozen database or engine). */
function countGauge(registry: Registry, name: string, help: string, count: () => Promise<number>): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      try {
        this.set(await Promise.race([count(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${name} timed out`)), 1000).unref())]));
      } catch {
        this.set(-1);
      }
    },
  });
}

/**
 * The process's own metrics (prom-client's defaults: CPU, memory, heap, event-loop delay, garbage
 * collection, handles), collected once by the process's entry point (main.ts) and served by its
 * app beside the app's own. Not per app: prom-client offers no way to stop them (its garbage
 * collection observer and event-loop-delay histogram last as long as the process), so an app that
 * started its own kept, through them, everything it held reachable after it was stopped (in a test
 * run, each test file's modules: ~30 MB a file).
 */
export function processMetrics(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** `ofProcess`: the process's metrics (processMetrics), served first; an app without them serves its own only. */
export function createMetrics(deps: Deps, admission?: () => AdmissionStats, auth: MetricsAuthHooks = {}, ofProcess: Registry | null = null): AppMetrics {
  const registry = new Registry();
  if (admission) admissionMetrics(registry, admission);
  const replica = deps.db.replica;
  if (replica) replicaMetrics(registry, replica);
  const engineStatus = deps.search.engineStatus?.bind(deps.search);
  if (engineStatus) engineMetrics(registry, engineStatus);
  const embeddingStatus = (deps.search as { embeddingStatus?: () => EmbeddingStats | null }).embeddingStatus?.bind(deps.search);
  if (embeddingStatus?.()) embeddingMetrics(registry, () => embeddingStatus()!);

  const { requests, latency } = httpRequestMetrics(registry);
  const rateLimited = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests answered 429 by a rate limit, by kind (rest, graphql, auth_failure, sign_in_failure, sign_in, device_login, anonymous, sign_up, share_reads)',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const search = new Histogram({
    name: 'search_duration_seconds',
    help: 'Search latency (engine query and re-check)',
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  countGauge(
    registry,
    'search_outbox_dead_total',
    'Search outbox work set aside after failing 10 times (search_outbox_dead; `search outbox retry` requeues it); -1 when the database is unreachable',
    () => outboxDeadCount(operatorCtx(deps.db, deps.config)),
  );
  countGauge(registry, 'search_outbox_backlog', 'Index operations waiting in the search outbox (-1 when the database is unreachable)', () =>
    outboxBacklog(operatorCtx(deps.db, deps.config)),
  );
  const recentDocuments = deps.search.recentDocuments?.bind(deps.search);
  if (recentDocuments)
    countGauge(
      registry,
      'search_recent_documents',
      'Documents in the recent search index: sessions written since the last compaction moved them into the main one (-1 when an engine does not answer)',
      recentDocuments,
    );

  const router = Router();
  router.get(SITE_ROUTES.metrics.path, async (req, res, next) => {
    try {
      const token = deps.config.metricsToken;
      if (token) {
        // Wrong tokens count against the failed-authentication limit of the address, like keys.
        await auth.beforeAuth?.(req);
        if (!bearerIs(req.headers.authorization, token)) {
          await auth.onAuthFailure?.(req);
          res.setHeader('WWW-Authenticate', 'Bearer');
          return next(unauthenticated());
        }
      }
      const text = (ofProcess ? await ofProcess.metrics() : '') + (await registry.metrics());
      res.setHeader('Content-Type', registry.contentType);
      res.setHeader('Cache-Control', 'no-store');
      res.send(text);
    } catch (err) {
      next(err);
    }
  });

  const metrics: AppMetrics = {
    registry,
    onRequestFinished(req, res, seconds, route = routeOf(req)) {
      requests.inc({ method: req.method, route, status: String(res.statusCode) });
      latency.observe({ method: req.method, route }, seconds);
      if (res.statusCode === 429) rateLimited.inc({ kind: (res.locals.rateLimitKind as string | undefined) ?? rateLimitKind(req) });
    },
    observeSearch(seconds) {
      search.observe(seconds);
    },
    router,
    close() {
      stopListening();
      registry.clear();
    },
  };
  // Every search the process runs (src/services/search.ts records them).
  const stopListening = onSearch((seconds) => metrics.observeSearch(seconds));
  return metrics;
}

/** Each search engine's health (src/search), read at each scrape. */
function engineMetrics(registry: Registry, status: () => EngineStatus[]): void {
  new Gauge({
    name: 'search_engine_up',
    help: 'A search engine answered its last request or probe (1) or not (0), by engine (position in MEILI_URLS) and role (primary, standby)',
    labelNames: ['engine', 'role'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of status()) {
        this.set({ engine: String(s.engine), role: 'primary' }, s.primaryUp ? 1 : 0);
        if (s.standbyUp !== null) this.set({ engine: String(s.engine), role: 'standby' }, s.standbyUp ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'search_standby_in_sync',
    help: 'A standby has applied every row of the search outbox from its cursor (1), or is behind or being rebuilt from the database (0), by engine',
    labelNames: ['engine'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of status()) if (s.standbyState !== null) this.set({ engine: String(s.engine) }, s.standbyState === 'in-sync' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'search_standby_lag_seconds',
    help: 'Seconds between the newest search outbox row and the oldest one a standby has not applied (0 when in sync), by engine',
    labelNames: ['engine'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of status()) if (s.standbyLagSeconds !== null) this.set({ engine: String(s.engine) }, s.standbyLagSeconds);
    },
  });
}

/** Semantic search's embeddings (src/search/semantic), read at each scrape; only with EMBEDDINGS_URL set. */
function embeddingMetrics(registry: Registry, status: () => EmbeddingStats): void {
  new Counter({
    name: 'search_embedding_requests_total',
    help: 'Requests to the embeddings endpoint, by kind (documents, query) and outcome (ok, failed: error, refusal or timeout)',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [kind, n] of Object.entries(status().requests)) {
        this.inc({ kind, outcome: 'ok' }, n.ok);
        this.inc({ kind, outcome: 'failed' }, n.failed);
      }
    },
  });
  new Counter({
    name: 'search_embedded_documents_total',
    help: 'Index documents given a vector by the embeddings endpoint (counted against EMBEDDINGS_PER_MINUTE)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(status().documents);
    },
  });
  new Gauge({
    name: 'search_embedding_pending',
    help: 'Index documents waiting for their vector, at the last pass of the embedding loop (-1 before the first)',
    registers: [registry],
    collect() {
      this.set(status().pending);
    },
  });
  new Gauge({
    name: 'search_standby_embedding_pending',
    help: 'Standby index documents waiting for their primary’s vector, at the last pass of the embedding loop (-1 before the first)',
    registers: [registry],
    collect() {
      this.set(status().standbyPending);
    },
  });
  new Counter({
    name: 'search_semantic_fallbacks_total',
    help: 'Searches answered lexically although semantic search is on (the query was not embedded in time, or the engine refused the hybrid query)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(status().lexicalFallbacks);
    },
  });
}

/** The read replica's state (src/db/replica.ts), read at each scrape. */
function replicaMetrics(registry: Registry, replica: Replica): void {
  new Gauge({
    name: 'db_replica_up',
    help: 'The read replica answered its last probe (1) or not (0: reads go to the primary)',
    registers: [registry],
    collect() {
      this.set(replica.status().up ? 1 : 0);
    },
  });
  new Gauge({
    name: 'db_replica_lag_seconds',
    help: 'How far the read replica is behind the primary (the age of the oldest primary GTID position it has not applied); -1 before the first measure',
    registers: [registry],
    collect() {
      this.set(replica.status().lagSeconds ?? -1);
    },
  });
  new Counter({
    name: 'db_replica_reads_total',
    help: 'Requests whose reads went to the read replica',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(replica.status().replicaReads);
    },
  });
  new Counter({
    name: 'db_replica_fallbacks_total',
    help: 'Requests whose reads went to the primary although a replica is configured, by reason (down, lagging, starting, wait_timeout, error, marks_unavailable)',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, n] of Object.entries(replica.status().fallbacks)) this.inc({ reason }, n);
    },
  });
}

/** Admission control's state (http/admission.ts), read at each scrape. */
function admissionMetrics(registry: Registry, stats: () => AdmissionStats): void {
  const gauge = (name: string, help: string, read: (s: AdmissionStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(stats()));
      },
    });
  gauge('upload_bytes_held', 'Request body bytes received and held by admitted requests, all users', (s) => s.bytesHeld);
  gauge('uploads_admitted', 'Requests with a body admitted and not yet answered', (s) => s.admitted);
  gauge('uploads_queued', 'Requests with a body waiting for room (refused busy if none frees up in time)', (s) => s.queued);
  gauge('uploads_paused', 'Admitted requests whose reading is held back for lack of room', (s) => s.paused);
  new Counter({
    name: 'uploads_refused_busy_total',
    help: "Requests answered 503 'Server busy, retry later' after waiting in the queue",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(stats().refusedBusy);
    },
  });
}

/** Every request's observation: a count by method, route pattern and status, and its latency. */
export function httpRequestMetrics(registry: Registry) {
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return { requests, latency };
}
