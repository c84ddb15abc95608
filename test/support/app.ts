import http from 'node:http';
import { testDataDir, testMeiliEnv } from './meili-engine';
import type { AddressInfo } from 'node:net';
import type { DestinationStream } from 'pino';
import { buildApp } from '../../src/app';
import type { RateLimitHooks } from '../../src/http/rate-limit';
import { loadConfig } from '../../src/config';
import { createDeps } from '../../src/deps';
import { createRateLimitHooks } from '../../src/http/rate-limit';
import { createLogger } from '../../src/logger';
import { createApiKey } from '../../src/services/keys';
import { operatorCtx } from '../../src/services/context';
import { createUser } from '../../src/services/users';
import type { Deps } from '../../src/services/context';
import { createTestDatabase, type TestDatabase } from './db';
import { checkResponse } from './openapi';
import { matrixStoreEnv } from './s3';

export interface TestResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Raw bytes of the body. */
  raw: Buffer;
  text: string;
  /** Parsed JSON when the body is JSON, else undefined. */
  body: any;
}

export interface RequestOptions {
  token?: string | null;
  /** Object → JSON with Content-Type; string/Buffer sent as is. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestUser {
  id: string;
  email: string;
  token: string;
  keyId: string;
}

/** Who sends a request: a token, a user (their token), or nobody. */
export type Caller = string | { token: string } | null;

/** The n-th session id of a test (a fixed UUID v4, so failures name the same ids every run). */
export const SID = (n: number) => `0e6a2d7c-1111-4222-8333-${String(n).padStart(12, '0')}`;

export interface TestApp {
  url: string;
  deps: Deps;
  /** The content store settings the app runs with (CONTENT_STORE, S3_*; {} for the default): for a CLI run on its database. */
  storeEnv: Record<string, string>;
  db: TestDatabase;
  request(method: string, urlPath: string, opts?: RequestOptions): Promise<TestResponse>;
  /** POST /api/v1/graphql with { query, variables, ...extra }. */
  gql(caller: Caller, query: string, variables?: unknown, extra?: Record<string, unknown>): Promise<TestResponse>;
  /** PUT a session (default body: a minimal one); the response, whatever it is. */
  put(caller: Caller, projectId: string, sessionId: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  /** PUT a session that must be stored (200 or 201). */
  upload(caller: Caller, projectId: string, sessionId: string, body: Record<string, unknown>): Promise<TestResponse>;
  createUser(name?: string): Promise<TestUser>;
  newKey(user: { id: string }, name?: string, expiresInDays?: number): Promise<{ token: string; keyId: string }>;
  close(): Promise<void>;
}

let userSeq = 0;

const tokenOf = (caller: Caller) => (caller === null || typeof caller === 'string' ? caller : caller.token);

/** Sends one HTTP request with node:http (no global fetch: exact control over headers and bytes). */
export function rawRequest(baseUrl: string, method: string, urlPath: string, opts: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  let payload: Buffer | undefined;
  if (opts.body !== undefined) {
    if (Buffer.isBuffer(opts.body)) payload = opts.body;
    else if (typeof opts.body === 'string') payload = Buffer.from(opts.body, 'utf8');
    else {
      payload = Buffer.from(JSON.stringify(opts.body), 'utf8');
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
    }
    headers['Content-Length'] = String(payload.length);
  }
  const u = new URL(urlPath, baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(u, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const text = raw.toString('utf8');
        let body: any;
        if (String(res.headers['content-type'] ?? '').includes('json')) {
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
        }
        const response = { status: res.statusCode ?? 0, headers: res.headers, raw, text, body };
        try {
          // Every REST response a test receives must match GET /api/v1/openapi.json.
          checkResponse(method, u.pathname, response);
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        resolve(response);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Replaces the rate-limit hooks; by default the real ones are built from the config. */
  hooks?: RateLimitHooks;
  /** false: no rate limiting at all (default: on, in memory unless REDIS_URL is given in env). */
  rateLimit?: boolean;
  /** Reuse a database instead of creating a fresh one. */
  db?: TestDatabase;
  /** Where the service log goes (with env LOG_LEVEL), e.g. to read it in a test. */
  logDestination?: DestinationStream;
}

/** Passes on the watchdog's "database unreachable" lines only, to stderr, naming the test file. */
const outageVerdicts: DestinationStream = {
  write(line: string) {
    if (!line.includes('"msg":"database unreachable"')) return;
    const file = typeof expect === 'undefined' ? undefined : expect.getState().testPath;
    process.stderr.write(`test app${file ? ` in ${file}` : ''}: ${line}`);
  },
};

/** A real app on a fresh, migrated database, listening on a free port. */
export async function startTestApp(options: StartOptions = {}): Promise<TestApp> {
  const db = options.db ?? (await createTestDatabase());
  // TEST_CONTENT_STORE=s3: content in a bucket of this database's own (a test's env still wins).
  const storeEnv = options.env?.CONTENT_STORE
    ? Object.fromEntries(Object.entries(options.env).filter(([k]) => k === 'CONTENT_STORE' || k.startsWith('S3_')))
    : await matrixStoreEnv(db.name);
  const config = loadConfig({
    DATABASE_URL: db.url,
    DATA_DIR: testDataDir(),
    JWT_SECRET: 'test-secret-that-is-long-enough',
    LOG_LEVEL: 'silent',
    NAMESPACE: db.name,
    // TEST_MEILI_ENGINES=n (support/meili-engine.ts): the run's engines.
    ...(process.env.MEILI_URLS ? testMeiliEnv() : {}),
    // TEST_REPLICA=1 (support/global-setup.ts): every app reads through a replica of the run's private primary.
    ...(process.env.TEST_REPLICA_URL ? { DATABASE_REPLICA_URL: process.env.TEST_REPLICA_URL } : {}),
    ...storeEnv,
    ...options.env,
  });
  // A test app logs nothing, but for the database watchdog's outage verdict: a 503 in a test that
  // did not stop the database is then explained in the run's output.
  const quiet = config.logLevel === 'silent' && !options.logDestination;
  const logger = quiet ? createLogger('warn', outageVerdicts) : createLogger(config.logLevel, options.logDestination);
  const deps = createDeps(config, logger);
  let rateLimit: ReturnType<typeof createRateLimitHooks> | null = null;
  let built: Awaited<ReturnType<typeof buildApp>> | null = null;
  let server: http.Server | null = null;
  /** Undoes what was started (all of it at close; what got started, when starting failed). */
  const stop = async () => {
    if (server) {
      const s = server;
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
    await built?.stop();
    await rateLimit?.close();
    await deps.close();
    if (!options.db) await db.drop();
  };
  try {
    await deps.start();
    rateLimit = options.hooks || options.rateLimit === false ? null : createRateLimitHooks(config, deps.logger);
    // As the service starts (src/main.ts): with Redis, served once its connection is up.
    await rateLimit?.ready();
    built = await buildApp(deps, options.hooks ?? rateLimit ?? {});
    server = http.createServer(built.app);
    const listening = server;
    await new Promise<void>((r) => listening.listen(0, '127.0.0.1', r));
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const newKey = async (user: { id: string }, name = 'test', expiresInDays?: number) => {
    const { key, token } = await createApiKey(operatorCtx(deps.db, { jwtSecret: config.jwtSecret }), { name, expiresInDays }, user.id);
    return { token, keyId: key.id };
  };
  const request = (method: string, urlPath: string, opts?: RequestOptions) => rawRequest(url, method, urlPath, opts);
  const put: TestApp['put'] = (caller, projectId, sessionId, body = { name: 's', markdown: '# m' }, headers) =>
    request('PUT', `/api/v1/projects/${projectId}/sessions/${sessionId}`, { token: tokenOf(caller), body, headers });
  return {
    url,
    deps,
    storeEnv,
    db,
    request,
    gql: (caller, query, variables, extra = {}) => request('POST', '/api/v1/graphql', { token: tokenOf(caller), body: { query, variables, ...extra } }),
    put,
    async upload(caller, projectId, sessionId, body) {
      const r = await put(caller, projectId, sessionId, body);
      expect([200, 201]).toContain(r.status);
      return r;
    },
    async createUser(name?: string) {
      const email = `${name ?? 'user'}-${process.pid}-${++userSeq}-${Date.now()}@example.test`;
      const u = await createUser(operatorCtx(deps.db), email, name);
      const k = await newKey(u);
      return { id: u.id, email, ...k };
    },
    newKey,
    close: stop,
  };
}
