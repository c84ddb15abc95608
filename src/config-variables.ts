/**
 * The environment variables the service reads and what each accepts (src/config.ts turns them
 * into the Config): one zod schema, whose messages are the problems loadConfig lists.
 */
import { z } from 'zod';
import { isTrustProxy, standbyListOf, urlListOf } from './config-checks';

const positiveInt = (name: string) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a positive integer`)
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n) && n > 0, `${name} must be a positive integer`);

/** An integer from `min` to `max`, with one message for anything else. */
const intFrom = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be an integer from ${min} to ${max}`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be an integer from ${min} to ${max}`);

const urlOf = (name: string, protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `${name} must be a URL (${protocols.join(' or ')})`,
  );

export const ENVIRONMENT = z.object({
  NODE_ENV: z.string().default('development'),
  PORT: intFrom('PORT', 1, 65_535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: urlOf('DATABASE_URL', ['mysql:', 'mariadb:']).default('mysql://root@127.0.0.1:3306/session_archive'),
  DATABASE_REPLICA_URL: urlOf('DATABASE_REPLICA_URL', ['mysql:', 'mariadb:']).optional(),
  DATABASE_REPLICA_WAIT_MS: intFrom('DATABASE_REPLICA_WAIT_MS', 0, 10_000).default(200),
  DATABASE_REPLICA_MAX_LAG_MS: intFrom('DATABASE_REPLICA_MAX_LAG_MS', 1, 600_000).default(5000),
  JWT_SECRET: z.string().min(16, 'JWT_SECRET must be at least 16 characters').optional(),
  MEILI_URL: urlOf('MEILI_URL', ['http:', 'https:']).optional(),
  MEILI_URLS: urlListOf('MEILI_URLS').optional(),
  MEILI_STANDBY_URLS: standbyListOf('MEILI_STANDBY_URLS').optional(),
  SEARCH_STANDBY_RETENTION_MINUTES: positiveInt('SEARCH_STANDBY_RETENTION_MINUTES').default(60),
  SEARCH_INDEXING_THREADS: intFrom('SEARCH_INDEXING_THREADS', 1, 256).optional(),
  MEILI_MASTER_KEY: z.string().optional(),
  MEILI_RECENT_URL: urlOf('MEILI_RECENT_URL', ['http:', 'https:']).optional(),
  MEILI_RECENT_MASTER_KEY: z.string().optional(),
  REDIS_URL: urlOf('REDIS_URL', ['redis:', 'rediss:']).optional(),
  EMBEDDINGS_URL: urlOf('EMBEDDINGS_URL', ['http:', 'https:']).optional(),
  EMBEDDINGS_MODEL: z.string().min(1).optional(),
  EMBEDDINGS_API_KEY: z.string().optional(),
  EMBEDDINGS_DIMENSIONS: intFrom('EMBEDDINGS_DIMENSIONS', 1, 8192).optional(),
  EMBEDDINGS_PER_MINUTE: positiveInt('EMBEDDINGS_PER_MINUTE').default(600),
  EMBEDDINGS_QUERY_TIMEOUT_MS: intFrom('EMBEDDINGS_QUERY_TIMEOUT_MS', 10, 10_000).default(300),
  EMBEDDINGS_SEMANTIC_RATIO: z
    .string()
    .regex(/^(0(\.\d+)?|1(\.0+)?)$/, 'EMBEDDINGS_SEMANTIC_RATIO must be a number from 0 to 1')
    .transform(Number)
    .default(0.5),
  RATE_LIMIT_REST_PER_HOUR: positiveInt('RATE_LIMIT_REST_PER_HOUR').default(1000),
  RATE_LIMIT_GRAPHQL_PER_HOUR: positiveInt('RATE_LIMIT_GRAPHQL_PER_HOUR').default(500),
  AUTH_FAILURE_LIMIT: positiveInt('AUTH_FAILURE_LIMIT').default(300),
  ANONYMOUS_REQUESTS_PER_MINUTE: positiveInt('ANONYMOUS_REQUESTS_PER_MINUTE').default(60),
  SIGN_INS_PER_ACCOUNT: positiveInt('SIGN_INS_PER_ACCOUNT').default(30),
  SIGN_INS_PER_ADDRESS: positiveInt('SIGN_INS_PER_ADDRESS').default(30),
  SIGN_UPS_PER_HOUR: positiveInt('SIGN_UPS_PER_HOUR').default(10),
  BROWSER_SESSIONS_PER_USER: positiveInt('BROWSER_SESSIONS_PER_USER').default(100),
  DEVICE_LOGIN_FAILURE_BUDGET: positiveInt('DEVICE_LOGIN_FAILURE_BUDGET').default(100),
  MAX_BODY_BYTES: positiveInt('MAX_BODY_BYTES').default(50 * 1024 * 1024),
  MAX_GRAPHQL_BODY_BYTES: positiveInt('MAX_GRAPHQL_BODY_BYTES').default(1024 * 1024),
  MAX_IMPORT_BYTES: positiveInt('MAX_IMPORT_BYTES').default(10 * 1024 * 1024 * 1024),
  METRICS_TOKEN: z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional(),
  // Default: 192 MiB, or 3 × MAX_BODY_BYTES when that is more (see loadConfig).
  UPLOAD_BYTES_IN_FLIGHT: positiveInt('UPLOAD_BYTES_IN_FLIGHT').optional(),
  UPLOADS_PER_USER: positiveInt('UPLOADS_PER_USER').default(24),
  UPLOAD_QUEUE_WAIT_MS: intFrom('UPLOAD_QUEUE_WAIT_MS', 0, 600_000).default(5000),
  BODY_MIN_BYTES_PER_S: positiveInt('BODY_MIN_BYTES_PER_S').default(64 * 1024),
  BODY_MIN_RATE_GRACE_S: positiveInt('BODY_MIN_RATE_GRACE_S').default(10),
  LONG_READS_PER_USER: positiveInt('LONG_READS_PER_USER').default(4),
  LONG_READ_IDLE_S: positiveInt('LONG_READ_IDLE_S').default(30),
  AUDIT_RETENTION_DAYS: positiveInt('AUDIT_RETENTION_DAYS').default(365),
  OFFLOAD_THREADS: intFrom('OFFLOAD_THREADS', 0, 64).optional(),
  SHUTDOWN_GRACE_S: intFrom('SHUTDOWN_GRACE_S', 0, 3600).default(30),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  METRICS_ENABLED: z.enum(['true', 'false']).default('true'),
  NAMESPACE: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'NAMESPACE must be 1-64 letters, digits, _ or -')
    .optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  CORS_ORIGINS: z.string().default(''),
  WORKERS_ENABLED: z.enum(['true', 'false']).default('true'),
  TRUST_PROXY: z
    .string()
    .refine(
      isTrustProxy,
      'TRUST_PROXY must be true, false, a number of hops, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal',
    )
    .default('loopback'),
  REDACT_SECRETS: z.enum(['on', 'report', 'off'], { message: 'REDACT_SECRETS must be on, report or off' }).default('on'),
  SIGNUP_ENABLED: z.enum(['true', 'false'], { error: 'SIGNUP_ENABLED must be true or false' }).default('false'),
  COOKIE_SECURE: z.enum(['true', 'false'], { error: 'COOKIE_SECURE must be true or false' }).default('false'),
  TEAMS: z.enum(['everyone', 'admins'], { error: 'TEAMS must be everyone or admins' }).default('everyone'),
  PUBLIC_URL: urlOf('PUBLIC_URL', ['http:', 'https:']).optional(),
  GRAPHQL_TRUSTED_DOCUMENTS: z.enum(['off', 'cookie', 'all'], { error: 'GRAPHQL_TRUSTED_DOCUMENTS must be off, cookie or all' }).default('off'),
  GRAPHQL_SCHEMA_PUBLIC: z.enum(['true', 'false'], { error: 'GRAPHQL_SCHEMA_PUBLIC must be true or false' }).default('true'),
  SHARES: z.enum(['public', 'signed-in', 'off'], { message: 'SHARES must be public, signed-in or off' }).default('public'),
  SHARES_ALLOW_NEVER: z.enum(['true', 'false'], { error: 'SHARES_ALLOW_NEVER must be true or false' }).default('false'),
  SHARE_READS_PER_MINUTE: positiveInt('SHARE_READS_PER_MINUTE').default(120),
  SHARE_LINK_SECRET: z.string().min(32, 'SHARE_LINK_SECRET must be at least 32 characters').optional(),
  CONTENT_STORE: z.enum(['db', 's3'], { error: 'CONTENT_STORE must be db or s3' }).default('db'),
  S3_ENDPOINT: urlOf('S3_ENDPOINT', ['http:', 'https:']).optional(),
  S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'S3_BUCKET must be a bucket name (3-63 lower-case letters, digits, dots or hyphens)')
    .optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: z.enum(['true', 'false'], { error: 'S3_FORCE_PATH_STYLE must be true or false' }).default('false'),
  S3_CHECKSUMS: z.enum(['when_supported', 'when_required'], { error: 'S3_CHECKSUMS must be when_supported or when_required' }).default('when_supported'),
  PRICES_FILE: z.string().optional(),
  RETENTION_DAYS: positiveInt('RETENTION_DAYS').optional(),
  FAST_PATHS: z.enum(['on', 'off'], { error: 'FAST_PATHS must be on or off' }).default('on'),
  MCP_OAUTH: z.enum(['on', 'off'], { error: 'MCP_OAUTH must be on or off' }).default('on'),
  OAUTH_CLIENT_HOSTS: z.string().default(''),
  OAUTH_CLIENTS_MAX: positiveInt('OAUTH_CLIENTS_MAX').default(10000),
  OAUTH_REGISTRATIONS_PER_HOUR: positiveInt('OAUTH_REGISTRATIONS_PER_HOUR').default(20),
  OAUTH_TOKEN_REQUESTS_PER_MINUTE: positiveInt('OAUTH_TOKEN_REQUESTS_PER_MINUTE').default(60),
  WEBHOOK_ALLOW_PRIVATE: z.enum(['true', 'false'], { error: 'WEBHOOK_ALLOW_PRIVATE must be true or false' }).default('false'),
  WEBHOOK_TIMEOUT_S: positiveInt('WEBHOOK_TIMEOUT_S').default(10),
  WEBHOOK_DELIVERY_RETENTION_DAYS: positiveInt('WEBHOOK_DELIVERY_RETENTION_DAYS').default(30),
  WEBHOOK_RETRY_DELAYS_S: z
    .string()
    .regex(/^\d+(,\d+){0,19}$/, 'WEBHOOK_RETRY_DELAYS_S must be a comma-separated list of seconds (at most 20)')
    .default('5,300,1800,7200,18000,36000,36000'),
});

/** The names of the environment variables the service reads. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(ENVIRONMENT.shape);
