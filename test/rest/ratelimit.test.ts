/**
 * Rate limits (docs/operations.md, "Rate limits"): per-user fixed one-hour windows, headers on every
 * authenticated response, the 429 envelope, a budget shared across instances through Redis,
 * and the per-address guard against failed authentications.
 */
import crypto from 'node:crypto';
import type { Request, Response } from 'express';
import Redis from 'ioredis';
import { loadConfig } from '../../src/config';
import { createRateLimitHooks } from '../../src/http/rate-limit';
import { createLogger } from '../../src/logger';
import { startTestApp, type TestApp } from '../support/app';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('REST rate limit (in memory)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { RATE_LIMIT_REST_PER_HOUR: '5', AUTH_FAILURE_LIMIT: '4' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('counts per user across all keys, sends headers, then answers 429 with Retry-After', async () => {
    const user = await app.createUser('rl');
    const second = await app.newKey(user, 'second');
    const before = Math.floor(Date.now() / 1000);

    const first = await app.request('GET', '/api/v1/projects', { token: user.token });
    expect(first.status).toBe(200);
    expect(first.headers['x-ratelimit-limit']).toBe('5');
    expect(first.headers['x-ratelimit-remaining']).toBe('4');
    const reset = Number(first.headers['x-ratelimit-reset']);
    // One-hour window from the first request, as UTC epoch seconds (rounded up).
    expect(reset).toBeGreaterThanOrEqual(before + 3600);
    expect(reset).toBeLessThanOrEqual(before + 3602);

    // The other key of the same user draws on the same budget; errors count too.
    const r2 = await app.request('GET', '/api/v1/projects/nope-project', { token: second.token });
    expect(r2.status).toBe(404);
    expect(r2.headers['x-ratelimit-remaining']).toBe('3');
    for (const expected of ['2', '1', '0']) {
      const r = await app.request('GET', '/api/v1/keys', { token: second.token });
      expect(r.status).toBe(200);
      expect(r.headers['x-ratelimit-remaining']).toBe(expected);
      // The window does not move: fixed, not sliding.
      expect(Math.abs(Number(r.headers['x-ratelimit-reset']) - reset)).toBeLessThanOrEqual(1);
    }

    const limited = await app.request('GET', '/api/v1/projects', { token: user.token });
    expect(limited.status).toBe(429);
    expect(limited.headers['x-ratelimit-limit']).toBe('5');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(limited.body).toEqual({ success: false, error: `Rate limit exceeded. Try again in ${retryAfter} seconds.` });

    // Another user is unaffected.
    const other = await app.createUser('rl-other');
    const ok = await app.request('GET', '/api/v1/projects', { token: other.token });
    expect(ok.status).toBe(200);
    expect(ok.headers['x-ratelimit-remaining']).toBe('4');
  });

  it('checks authentication before the rate limit, and the rate limit before validation', async () => {
    const user = await app.createUser('rl-order');
    for (let i = 0; i < 5; i++) {
      expect((await app.request('GET', '/api/v1/projects', { token: user.token })).status).toBe(200);
    }
    // Invalid body from an exhausted user: 429, not 400.
    const r = await app.request('POST', '/api/v1/projects', { token: user.token, body: '{not json', headers: { 'Content-Type': 'application/json' } });
    expect(r.status).toBe(429);
    // Unauthenticated requests carry no per-user rate-limit headers.
    const anon = await app.request('GET', '/api/v1/projects');
    expect(anon.status).toBe(401);
    expect(anon.headers['x-ratelimit-limit']).toBeUndefined();
  });
});

test('closing the hooks forgets the in-memory counts (each kept a timer, and through it the hooks, for up to an hour)', async () => {
  const config = loadConfig({
    DATABASE_URL: 'mysql://root@127.0.0.1:3306/unused',
    JWT_SECRET: 'test-secret-that-is-long-enough',
    RATE_LIMIT_REST_PER_HOUR: '3',
  });
  const hooks = createRateLimitHooks(config, createLogger('silent'));
  const remaining = async () => {
    const headers: Record<string, string> = {};
    const res = { headersSent: false, locals: {}, setHeader: (k: string, v: string) => (headers[k] = v) } as unknown as Response;
    await hooks.rest!({ user: { id: 'u-closing' }, res } as unknown as Request, res, () => undefined);
    return headers['X-RateLimit-Remaining'];
  };
  expect(await remaining()).toBe('2');
  expect(await remaining()).toBe('1');
  await hooks.close();
  expect(await remaining()).toBe('2');
  await hooks.close();
});

describe('GraphQL rate limit', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { RATE_LIMIT_GRAPHQL_PER_HOUR: '2', RATE_LIMIT_REST_PER_HOUR: '3' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('has its own per-user budget and answers 429 in the GraphQL envelope', async () => {
    const user = await app.createUser('rl-gql');
    const op = { query: '{ projects { id } }' };
    for (const remaining of ['1', '0']) {
      const r = await app.request('POST', '/api/v1/graphql', { token: user.token, body: op });
      expect(r.status).toBe(200);
      expect(r.headers['x-ratelimit-limit']).toBe('2');
      expect(r.headers['x-ratelimit-remaining']).toBe(remaining);
    }
    const limited = await app.request('POST', '/api/v1/graphql', { token: user.token, body: op });
    expect(limited.status).toBe(429);
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3500);
    expect(limited.body).toEqual({
      errors: [{ message: `Rate limit exceeded. Try again in ${retryAfter} seconds.`, extensions: { code: 'RATE_LIMITED' } }],
    });
    // REST counts apart.
    const rest = await app.request('GET', '/api/v1/projects', { token: user.token });
    expect(rest.status).toBe(200);
    expect(rest.headers['x-ratelimit-limit']).toBe('3');
    expect(rest.headers['x-ratelimit-remaining']).toBe('2');
  });
});

describe('failed authentications per client address', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { AUTH_FAILURE_LIMIT: '4' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers 401 up to the limit, then 429 — even for a valid token from that address', async () => {
    const user = await app.createUser('bf');
    for (let i = 0; i < 4; i++) {
      const r = await app.request('GET', '/api/v1/projects', { token: `garbage${i}` });
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ success: false, error: 'Invalid session token' });
    }
    const limited = await app.request('GET', '/api/v1/projects', { token: 'garbage-again' });
    expect(limited.status).toBe(429);
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    expect(limited.body).toEqual({ success: false, error: `Rate limit exceeded. Try again in ${retryAfter} seconds.` });

    // The address is blocked before its token is even looked at.
    const valid = await app.request('GET', '/api/v1/projects', { token: user.token });
    expect(valid.status).toBe(429);
    // GraphQL answers in its own envelope.
    const gql = await app.request('POST', '/api/v1/graphql', { body: { query: '{ __typename }' } });
    expect(gql.status).toBe(429);
    expect(gql.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(gql.body.errors[0].message).toMatch(/^Rate limit exceeded\. Try again in \d+ seconds\.$/);
    // Health endpoints need no auth and stay reachable.
    expect((await app.request('GET', '/healthz')).status).toBe(200);
  });
});

describe('client address behind a proxy (TRUST_PROXY)', () => {
  const fail = (app: TestApp, from: string) =>
    app.request('GET', '/api/v1/projects', { token: 'garbage', headers: { 'X-Forwarded-For': from } }).then((r) => r.status);

  it('by default X-Forwarded-For from a loopback proxy gives each client its own failed-auth budget', async () => {
    const app = await startTestApp({ env: { AUTH_FAILURE_LIMIT: '2' } });
    try {
      expect([await fail(app, '203.0.113.1'), await fail(app, '203.0.113.1'), await fail(app, '203.0.113.1')]).toEqual([401, 401, 429]);
      // Another client behind the same proxy is not locked out.
      expect(await fail(app, '203.0.113.2')).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('IPv6 clients are counted per /64: another address of the same /64 shares the budget', async () => {
    const app = await startTestApp({ env: { AUTH_FAILURE_LIMIT: '2' } });
    try {
      expect([await fail(app, '2001:db8:1:2::1'), await fail(app, '2001:db8:1:2:ffff::9'), await fail(app, '2001:db8:1:2:0:0:0:3')]).toEqual([401, 401, 429]);
      expect(await fail(app, '2001:db8:1:3::1')).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('TRUST_PROXY=false ignores the header: every request counts against the peer address', async () => {
    const app = await startTestApp({ env: { AUTH_FAILURE_LIMIT: '2', TRUST_PROXY: 'false' } });
    try {
      expect([await fail(app, '203.0.113.1'), await fail(app, '203.0.113.2'), await fail(app, '203.0.113.3')]).toEqual([401, 401, 429]);
    } finally {
      await app.close();
    }
  });
});

describe('shared budget across two instances through Redis', () => {
  const namespace = `rltest_${crypto.randomBytes(4).toString('hex')}`;
  let a: TestApp;
  let b: TestApp;
  let redis: Redis;

  beforeAll(async () => {
    const env = { REDIS_URL, NAMESPACE: namespace, RATE_LIMIT_REST_PER_HOUR: '5' };
    a = await startTestApp({ env });
    b = await startTestApp({ env, db: a.db });
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${namespace}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await b.close();
    await a.close();
  });

  it('lets exactly N requests through in total, then both instances answer 429', async () => {
    const user = await a.createUser('shared');
    // Interleaved and concurrent, across both instances.
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? b : a).request('GET', '/api/v1/projects', { token: user.token })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    const remaining = results
      .filter((r) => r.status === 200)
      .map((r) => Number(r.headers['x-ratelimit-remaining']))
      .sort();
    expect(remaining).toEqual([0, 1, 2, 3, 4]);

    expect((await a.request('GET', '/api/v1/projects', { token: user.token })).status).toBe(429);
    expect((await b.request('GET', '/api/v1/projects', { token: user.token })).status).toBe(429);

    // The count lives in Redis under the namespace.
    const keys = await redis.keys(`${namespace}:rl:rest*`);
    expect(keys.length).toBe(1);
    expect(Number(await redis.get(keys[0]))).toBeGreaterThanOrEqual(5);
    const ttl = await redis.pttl(keys[0]);
    expect(ttl).toBeGreaterThan(3500_000);
  });
});

describe('Redis unreachable', () => {
  let app: TestApp;
  beforeAll(async () => {
    // Nothing listens on port 1: the limiter falls back to counting in memory.
    app = await startTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_REST_PER_HOUR: '2' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('keeps serving and limiting (in memory) instead of failing requests', async () => {
    const user = await app.createUser('rl-noredis');
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await app.request('GET', '/api/v1/projects', { token: user.token })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
