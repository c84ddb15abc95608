import { createHmac } from 'node:crypto';
import path from 'node:path';
import { databaseNameOf, meiliProblems, pricesOf, replicaProblems, s3Problems } from './config-checks';
import { ENVIRONMENT } from './config-variables';
import type { PriceTable } from './domain/usage/prices';

import type { RedactMode } from './redact';
import { readOrCreateSecret } from './secret-file';

/** An OpenAI-compatible embeddings endpoint (EMBEDDINGS_*). */
export interface EmbeddingsConfig {
  /** `POST` target: the full URL of the endpoint (…/v1/embeddings). */
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer`; null: none. */
  apiKey: string | null;
  dimensions: number;
  /** Document texts embedded per minute at most (the indexing budget). */
  perMinute: number;
  /** How long a search waits for its query's embedding before answering lexically. */
  queryTimeoutMs: number;
  /** Weight of the semantic results against the lexical ones, 0 to 1. */
  semanticRatio: number;
}

/** The one place that reads process.env: everything is validated once, at start. */
export interface Config {
  nodeEnv: string;
  port: number;
  host: string;
  databaseUrl: string;
  databaseName: string;
  /** A read replica of the database (GTID replication); null: every read goes to DATABASE_URL. */
  databaseReplicaUrl: string | null;
  /** How long a read waits for the replica to apply the reader's own last write before reading from the primary. */
  databaseReplicaWaitMs: number;
  /** A replica further behind than this is not read from. */
  databaseReplicaMaxLagMs: number;
  jwtSecret: string;
  /** The first (with MEILI_URL, the only) engine; null: embedded. */
  meiliUrl: string | null;
  /** Every engine (MEILI_URLS, or MEILI_URL alone); empty: embedded. Scopes are placed on them by hash. */
  meiliUrls: string[];
  /** A standby per engine, same order (MEILI_STANDBY_URLS; '' for an engine without one); empty: none. */
  meiliStandbyUrls: string[];
  /** Minutes applied search outbox rows are kept for a standby that is behind; one further behind is rebuilt (SEARCH_STANDBY_RETENTION_MINUTES). */
  searchStandbyRetentionMinutes: number;
  /** Threads the embedded main engine may index with (SEARCH_INDEXING_THREADS); null: the engine's default, half of the cores. */
  searchIndexingThreads: number | null;
  /** The key of every engine and standby (and of the recent one unless MEILI_RECENT_MASTER_KEY). */
  meiliMasterKey: string | null;
  /** A second server for the recent index (default: the MEILI_URL one). */
  meiliRecentUrl: string | null;
  meiliRecentMasterKey: string | null;
  redisUrl: string | null;
  /** Semantic search (docs/search.md, "Semantic search"); null: off, nothing calls out and search is lexical. */
  embeddings: EmbeddingsConfig | null;
  rateLimitRestPerHour: number;
  rateLimitGraphqlPerHour: number;
  authFailureLimit: number;
  /**
   * Requests per client address per minute to the doors that work without a session or key
   * (first-run setup, sign-in, sign-up, reset links, device login), counted before any lock or
   * database work.
   */
  anonymousRequestsPerMinute: number;
  /** Successful sign-ins per account per 15 minutes. */
  signInsPerAccount: number;
  /** Successful sign-ins per client address per 15 minutes. */
  signInsPerAddress: number;
  /** Sign-ups per client address per hour (when sign-up is enabled). */
  signUpsPerHour: number;
  /** Browser sessions a user holds at most; a new one beyond it ends the oldest. */
  browserSessionsPerUser: number;
  /** Failed device logins per 10 minutes, the whole service together; beyond it every address gets 429. */
  deviceLoginFailureBudget: number;
  maxBodyBytes: number;
  /** An import archive (POST /import, the CLI's import) may be at most this many bytes. */
  maxImportBytes: number;
  /** GraphQL request bodies, independent of the upload limit. */
  maxGraphqlBodyBytes: number;
  /** When set, GET /metrics requires it as a Bearer token. */
  metricsToken: string | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  metricsEnabled: boolean;
  namespace: string;
  dataDir: string;
  corsOrigins: string[];
  /** Background workers (search outbox) run in this process. Tests may turn them off. */
  workersEnabled: boolean;
  /** Express's `trust proxy`: which peers' X-Forwarded-For gives the client address. */
  trustProxy: boolean | number | string;
  /** Admission control: the shared upload capacity, body bytes received and held, all users (one user: at most half). */
  uploadBytesInFlight: number;
  /** Admission control: requests with a body one user may have admitted at once (more wait in the queue). */
  uploadsPerUser: number;
  /** Admission control: how long a request over capacity waits for room before 503 busy. */
  uploadQueueWaitMs: number;
  /** Slow bodies: the minimum average rate (bytes/s on the wire) once the grace period has passed. */
  bodyMinBytesPerSecond: number;
  /** Slow bodies: how long a body may arrive at any rate before the minimum average applies. */
  bodyMinRateGraceS: number;
  /** Long reads (downloads and exports that stream): how many one user may have open at once, per instance. */
  longReadsPerUser: number;
  /** Long reads: a reader that takes nothing for this many seconds is cut off. */
  longReadIdleS: number;
  /** Audit log entries older than this many days are pruned (hourly, by one instance). */
  auditRetentionDays: number;
  /** Worker threads for large uploads and index documents (src/offload); 0 = on the event loop; unset = cores − 1, 1 to 4. */
  offloadThreads?: number;
  /** SIGTERM: how long in-flight requests may still run. */
  shutdownGraceS: number;
  /** Secrets in uploads: masked (`on`), only reported (`report`), or left (`off`). */
  redactSecrets: RedactMode;
  /** Self sign-up in the console (default off). */
  signupEnabled: boolean;
  /** Who may create teams: any user (`everyone`, default) or only instance admins (`admins`). */
  teams: 'everyone' | 'admins';
  /** `Secure` on the session cookie even over plain HTTP (behind a TLS-terminating proxy). */
  cookieSecure: boolean;
  /** The service's public origin (reset links, CSRF origin check); null: taken from the request. */
  publicUrl: string | null;
  /** GET /api/v1/graphql/ENVIRONMENT.graphql and changelog.json answer without a credential (default true). */
  graphqlSchemaPublic: boolean;
  /** Which GraphQL requests must send a registered `documentId` instead of a query: none, browser sessions, all. */
  graphqlTrustedDocuments: 'off' | 'cookie' | 'all';
  /** Share links: `public` (default), `signed-in` (no public links) or `off`. */
  shares: 'public' | 'signed-in' | 'off';
  /** Share links that never expire are allowed. */
  sharesAllowNever: boolean;
  /** Reads of share links per client address per minute. */
  shareReadsPerMinute: number;
  /** The key that signs share link tokens (derived from JWT_SECRET unless SHARE_LINK_SECRET is set). */
  shareLinkSecret: string;
  /** Where content (markdown, raw data, session data) is written: database rows (`db`) or S3 objects (`s3`). */
  contentStore: 'db' | 's3';
  /** The object store; required with `contentStore: 's3'`, optional with `db` (reads and `content migrate` of objects already there). */
  s3: S3Config | null;
  /** Prices of tokens per model (PRICES_FILE, or the table that ships with the service; docs/usage.md). */
  prices: PriceTable;
  /** The performance shortcuts of src/http/fast (FAST_PATHS, default on); off: the plain code path everywhere. */
  fastPaths: boolean;
  /** Days after its last update a session is deleted when neither its project nor its team sets retention (RETENTION_DAYS); null: kept. */
  retentionDays: number | null;
  /** Webhooks: targets on private, loopback and link-local addresses allowed (WEBHOOK_ALLOW_PRIVATE; default refused). */
  webhookAllowPrivate: boolean;
  /** Webhooks: how long one delivery attempt may take, connection to last byte (seconds). */
  webhookTimeoutS: number;
  /** Webhooks: the wait before each retry after a failed attempt (seconds); when they run out, the delivery has failed. */
  webhookRetryDelaysS: number[];
  /** Webhooks: finished deliveries older than this many days are pruned, beyond each webhook's newest 100 (WEBHOOK_DELIVERY_RETENTION_DAYS). */
  webhookDeliveryRetentionDays: number;
  /** Sign-in for MCP connectors (MCP_OAUTH, default on; docs/mcp.md): discovery, registration, consent, tokens. */
  oauth: OAuthConfig;
}

/** The OAuth authorization server of /mcp. */
interface OAuthConfig {
  enabled: boolean;
  /** Hosts (`name` or `name:port`) whose client metadata documents may be fetched from any address, over http too (OAUTH_CLIENT_HOSTS). */
  clientHosts: readonly string[];
  /** Registered clients at most (OAUTH_CLIENTS_MAX). */
  clientsMax: number;
  /** Registrations per client address per hour (OAUTH_REGISTRATIONS_PER_HOUR). */
  registrationsPerHour: number;
  /** Token and revocation requests per client address per minute (OAUTH_TOKEN_REQUESTS_PER_MINUTE). */
  tokenRequestsPerMinute: number;
}

/** An S3-compatible bucket holding content objects. */
export interface S3Config {
  /** null: the AWS endpoint of the region. */
  endpoint: string | null;
  bucket: string;
  region: string;
  /** null (both): the SDK's own credential chain (instance role, web identity). */
  accessKeyId: string | null;
  secretAccessKey: string | null;
  forcePathStyle: boolean;
  /** `when_required`: no CRC32 on requests and responses unless an operation demands it (stores that reject the SDK's default). */
  checksums: 'when_supported' | 'when_required';
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

function trustProxyOf(v: string): boolean | number | string {
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (/^\d+$/.test(v)) return Number(v);
  return v;
}

/** Validates the environment; every problem is listed at once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const given = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const parsed = ENVIRONMENT.safeParse(given);
  const problems: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path.join('.');
      problems.push(issue.message.includes(key) ? issue.message : `${key}: ${issue.message}`);
    }
  }
  // Checks across variables run even when some variable failed above: every problem at once.
  const rawDbUrl = parsed.success ? parsed.data.DATABASE_URL : given.DATABASE_URL;
  if (parsed.success || (rawDbUrl !== undefined && !problems.some((p) => p.includes('DATABASE_URL')))) {
    const databaseName = rawDbUrl === undefined ? 'session_archive' : databaseNameOf(rawDbUrl);
    if (!/^[A-Za-z0-9_$-]{1,64}$/.test(databaseName)) {
      problems.push('DATABASE_URL must name a database (letters, digits, _, $ or -)');
    }
  }
  problems.push(...replicaProblems(parsed.success ? parsed.data.DATABASE_REPLICA_URL : given.DATABASE_REPLICA_URL, problems));
  problems.push(...meiliProblems(given, parsed.success ? parsed.data : null));
  // Any sender could then choose its own address (and escape the failed-authentication limit).
  if (given.TRUST_PROXY?.trim() === 'true') {
    problems.push("TRUST_PROXY=true trusts any sender's X-Forwarded-For; list your proxies instead (addresses, CIDR ranges, loopback, linklocal, uniquelocal)");
  }
  if ((given.NODE_ENV ?? 'development') === 'production' && !given.JWT_SECRET) {
    problems.push('JWT_SECRET is required when NODE_ENV=production');
  }
  // One user holds at most half the capacity and one upload may be MAX_BODY_BYTES: below three
  // times that, one user's uploads could leave no room for another user's.
  if (parsed.success && parsed.data.UPLOAD_BYTES_IN_FLIGHT !== undefined && parsed.data.UPLOAD_BYTES_IN_FLIGHT < 3 * parsed.data.MAX_BODY_BYTES) {
    problems.push(
      'UPLOAD_BYTES_IN_FLIGHT must be at least three times MAX_BODY_BYTES (one user holds at most half of it, and one upload may be MAX_BODY_BYTES)',
    );
  }
  problems.push(...s3Problems(given));
  if (given.EMBEDDINGS_URL) {
    for (const name of ['EMBEDDINGS_MODEL', 'EMBEDDINGS_DIMENSIONS'] as const) if (!given[name]) problems.push(`${name} is required with EMBEDDINGS_URL`);
  }
  const prices = pricesOf(given.PRICES_FILE ?? null, problems);
  if (!parsed.success || problems.length || !prices) throw new ConfigError(problems);
  const e = parsed.data;
  const databaseName = databaseNameOf(e.DATABASE_URL);

  const dataDir = path.resolve(e.DATA_DIR);
  return Object.freeze({
    nodeEnv: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    databaseName,
    databaseReplicaUrl: e.DATABASE_REPLICA_URL ?? null,
    databaseReplicaWaitMs: e.DATABASE_REPLICA_WAIT_MS,
    databaseReplicaMaxLagMs: e.DATABASE_REPLICA_MAX_LAG_MS,
    jwtSecret: e.JWT_SECRET ?? localJwtSecret(dataDir),
    meiliUrl: e.MEILI_URL ?? e.MEILI_URLS?.[0] ?? null,
    meiliUrls: e.MEILI_URLS ?? (e.MEILI_URL ? [e.MEILI_URL] : []),
    meiliStandbyUrls: e.MEILI_STANDBY_URLS ?? [],
    searchStandbyRetentionMinutes: e.SEARCH_STANDBY_RETENTION_MINUTES,
    searchIndexingThreads: e.SEARCH_INDEXING_THREADS ?? null,
    meiliMasterKey: e.MEILI_MASTER_KEY ?? null,
    meiliRecentUrl: e.MEILI_RECENT_URL ?? null,
    meiliRecentMasterKey: e.MEILI_RECENT_MASTER_KEY ?? e.MEILI_MASTER_KEY ?? null,
    redisUrl: e.REDIS_URL ?? null,
    embeddings: e.EMBEDDINGS_URL
      ? Object.freeze({
          url: e.EMBEDDINGS_URL,
          model: e.EMBEDDINGS_MODEL!,
          apiKey: e.EMBEDDINGS_API_KEY || null,
          dimensions: e.EMBEDDINGS_DIMENSIONS!,
          perMinute: e.EMBEDDINGS_PER_MINUTE,
          queryTimeoutMs: e.EMBEDDINGS_QUERY_TIMEOUT_MS,
          semanticRatio: e.EMBEDDINGS_SEMANTIC_RATIO,
        })
      : null,
    rateLimitRestPerHour: e.RATE_LIMIT_REST_PER_HOUR,
    rateLimitGraphqlPerHour: e.RATE_LIMIT_GRAPHQL_PER_HOUR,
    authFailureLimit: e.AUTH_FAILURE_LIMIT,
    anonymousRequestsPerMinute: e.ANONYMOUS_REQUESTS_PER_MINUTE,
    signInsPerAccount: e.SIGN_INS_PER_ACCOUNT,
    signInsPerAddress: e.SIGN_INS_PER_ADDRESS,
    signUpsPerHour: e.SIGN_UPS_PER_HOUR,
    browserSessionsPerUser: e.BROWSER_SESSIONS_PER_USER,
    deviceLoginFailureBudget: e.DEVICE_LOGIN_FAILURE_BUDGET,
    maxBodyBytes: e.MAX_BODY_BYTES,
    maxGraphqlBodyBytes: e.MAX_GRAPHQL_BODY_BYTES,
    maxImportBytes: e.MAX_IMPORT_BYTES,
    metricsToken: e.METRICS_TOKEN ?? null,
    logLevel: e.LOG_LEVEL,
    metricsEnabled: e.METRICS_ENABLED === 'true',
    namespace: e.NAMESPACE ?? databaseName.replace(/[^A-Za-z0-9_-]/g, '_'),
    dataDir,
    corsOrigins: e.CORS_ORIGINS.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    workersEnabled: e.WORKERS_ENABLED === 'true',
    trustProxy: trustProxyOf(e.TRUST_PROXY),
    uploadBytesInFlight: e.UPLOAD_BYTES_IN_FLIGHT ?? Math.max(192 * 1024 * 1024, 3 * e.MAX_BODY_BYTES),
    uploadsPerUser: e.UPLOADS_PER_USER,
    uploadQueueWaitMs: e.UPLOAD_QUEUE_WAIT_MS,
    bodyMinBytesPerSecond: e.BODY_MIN_BYTES_PER_S,
    bodyMinRateGraceS: e.BODY_MIN_RATE_GRACE_S,
    longReadsPerUser: e.LONG_READS_PER_USER,
    longReadIdleS: e.LONG_READ_IDLE_S,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    offloadThreads: e.OFFLOAD_THREADS,
    shutdownGraceS: e.SHUTDOWN_GRACE_S,
    redactSecrets: e.REDACT_SECRETS,
    signupEnabled: e.SIGNUP_ENABLED === 'true',
    teams: e.TEAMS,
    cookieSecure: e.COOKIE_SECURE === 'true',
    publicUrl: e.PUBLIC_URL ? new URL(e.PUBLIC_URL).origin : null,
    graphqlSchemaPublic: e.GRAPHQL_SCHEMA_PUBLIC === 'true',
    graphqlTrustedDocuments: e.GRAPHQL_TRUSTED_DOCUMENTS,
    shares: e.SHARES,
    sharesAllowNever: e.SHARES_ALLOW_NEVER === 'true',
    shareReadsPerMinute: e.SHARE_READS_PER_MINUTE,
    shareLinkSecret: e.SHARE_LINK_SECRET ?? shareKeyOf(e.JWT_SECRET ?? localJwtSecret(dataDir)),
    contentStore: e.CONTENT_STORE,
    s3: e.S3_BUCKET
      ? Object.freeze({
          endpoint: e.S3_ENDPOINT ?? null,
          bucket: e.S3_BUCKET,
          region: e.S3_REGION,
          accessKeyId: e.S3_ACCESS_KEY_ID ?? null,
          secretAccessKey: e.S3_SECRET_ACCESS_KEY ?? null,
          forcePathStyle: e.S3_FORCE_PATH_STYLE === 'true',
          checksums: e.S3_CHECKSUMS,
        })
      : null,
    prices,
    fastPaths: e.FAST_PATHS === 'on',
    retentionDays: e.RETENTION_DAYS ?? null,
    oauth: Object.freeze({
      enabled: e.MCP_OAUTH === 'on',
      clientHosts: e.OAUTH_CLIENT_HOSTS.split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
      clientsMax: e.OAUTH_CLIENTS_MAX,
      registrationsPerHour: e.OAUTH_REGISTRATIONS_PER_HOUR,
      tokenRequestsPerMinute: e.OAUTH_TOKEN_REQUESTS_PER_MINUTE,
    }),
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE === 'true',
    webhookTimeoutS: e.WEBHOOK_TIMEOUT_S,
    webhookRetryDelaysS: e.WEBHOOK_RETRY_DELAYS_S.split(',').map(Number),
    webhookDeliveryRetentionDays: e.WEBHOOK_DELIVERY_RETENTION_DAYS,
  });
}

/** A key of its own for share links, derived from the JWT secret (a token of one never verifies as the other). */
function shareKeyOf(jwtSecret: string): string {
  return createHmac('sha256', jwtSecret).update('session-archive share links v1').digest('base64url');
}

/** Outside production a secret is generated once and kept under DATA_DIR. */
function localJwtSecret(dataDir: string): string {
  return readOrCreateSecret(path.join(dataDir, 'jwt-secret'), 48);
}
