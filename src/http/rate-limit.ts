import net from 'node:net';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { AuthFailureHook } from './auth';
import type { Config } from '../config';
import { AppError } from '../errors';
import type { Logger } from '../logger';

const MINUTE = 60;
const HOUR = 60 * 60;
const AUTH_FAILURE_WINDOW = 15 * 60;
const SIGN_IN_WINDOW = 15 * 60;
const DEVICE_FAILURE_WINDOW = 10 * 60;
/** Failed sign-ins per account per 15 minutes. */
const ACCOUNT_FAILURE_LIMIT = 10;

/**
 * Budgets counted per client address before a request does any lock or database work:
 * `anonymous` is every request to a door that works without a session or key (first-run
 * setup, sign-in, sign-up, reset links, device login); `signUp` is each
 * sign-up attempt. A later unauthenticated reader (share links) adds its own name here and a
 * line in `addressBudgets` below.
 */
type AddressBudget = 'anonymous' | 'signUp' | 'shareReads' | 'oauthRegister' | 'oauthToken';

/** What buildApp (src/app.ts) takes to limit rates; every hook is optional. */
export interface RateLimitHooks {
  // Express 5 middleware: a returned promise's rejection goes to the error handler.
  rest?: RequestHandler;
  graphql?: RequestHandler;
  onAuthFailure?: AuthFailureHook;
  /** Runs before the token is checked (an address over the auth-failure limit → 429). */
  beforeAuth?: AuthFailureHook;
  /** Before a sign-in is tried: an account over its failed sign-in limit → 429. */
  beforeSignIn?: (req: Request, email: string) => Promise<void>;
  /** A failed sign-in, counted against the account. */
  onSignInFailure?: (req: Request, email: string) => Promise<void>;
  /**
   * A successful sign-in, counted per account and per address; over either limit → 429 (the
   * caller then starts no browser session).
   */
  onSignInSuccess?: (req: Request, email: string) => Promise<void>;
  /** Spends one unit of an address's budget (no database work); 429 when it is spent. */
  spendAddress?: (req: Request, budget: AddressBudget) => Promise<void>;
  /** Before a device login is tried: the service-wide budget of failed device logins spent → 429. */
  beforeDeviceLogin?: (req: Request) => Promise<void>;
  /** A failed device login, counted against the service-wide budget. */
  onDeviceLoginFailure?: (req: Request) => Promise<void>;
}

interface RateLimitHandles extends RateLimitHooks {
  onAuthFailure: NonNullable<RateLimitHooks['onAuthFailure']>;
  beforeSignIn: NonNullable<RateLimitHooks['beforeSignIn']>;
  onSignInFailure: NonNullable<RateLimitHooks['onSignInFailure']>;
  onSignInSuccess: NonNullable<RateLimitHooks['onSignInSuccess']>;
  spendAddress: NonNullable<RateLimitHooks['spendAddress']>;
  beforeDeviceLogin: NonNullable<RateLimitHooks['beforeDeviceLogin']>;
  onDeviceLoginFailure: NonNullable<RateLimitHooks['onDeviceLoginFailure']>;
  /** Runs before the token is checked: an address already over the auth-failure limit gets 429. */
  beforeAuth: (req: Request) => Promise<void>;
  /**
   * Resolves once the Redis connection is ready (at once without Redis), or after REDIS_READY_MS
   * with a warning: until then every limiter counts in this process's memory, so an instance that
   * served before its connection was up would let a shared budget through once more per instance.
   */
  ready(): Promise<void>;
  /** Closes the Redis connection when this module opened it, and forgets the in-memory counts. */
  close(): Promise<void>;
}

/** How long a start waits for the Redis connection before serving with per-instance counts. */
const REDIS_READY_MS = 3000;

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** X-RateLimit-* (docs/operations.md, "Rate limits"): Reset is UTC epoch seconds, rounded up. */
function setHeaders(res: Response, limit: number, r: RateLimiterRes, rejected: boolean): void {
  res.setHeader('X-RateLimit-Limit', String(limit));
  res.setHeader('X-RateLimit-Remaining', String(rejected ? 0 : Math.max(0, limit - r.consumedPoints)));
  res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)));
  if (rejected) res.setHeader('Retry-After', String(seconds(r.msBeforeNext)));
}

/**
 * Which limit refused a request, for /metrics' `rate_limit_rejections_total{kind}`: the per-user
 * budgets (`rest`, `graphql`) and each per-address or per-account guard by its own name.
 */
export type RateLimitKind =
  | 'rest'
  | 'graphql'
  | 'auth_failure'
  | 'sign_in_failure'
  | 'sign_in'
  | 'device_login'
  | 'anonymous'
  | 'sign_up'
  | 'share_reads'
  | 'long_reads'
  | 'oauth_register'
  | 'oauth_token';
const BUDGET_KIND: Record<AddressBudget, RateLimitKind> = {
  anonymous: 'anonymous',
  signUp: 'sign_up',
  shareReads: 'share_reads',
  oauthRegister: 'oauth_register',
  oauthToken: 'oauth_token',
};

function rateLimited(req: Request, r: RateLimiterRes, kind: RateLimitKind): AppError {
  if (req.res) req.res.locals.rateLimitKind = kind;
  return new AppError('RATE_LIMITED', `Rate limit exceeded. Try again in ${seconds(r.msBeforeNext)} seconds.`, {
    retryAfter: seconds(r.msBeforeNext),
  });
}

/**
 * Per-user fixed one-hour windows (REST and GraphQL budgets apart), and a per-address guard
 * against failed authentications. With Redis the counts are shared by every
 * instance (keys prefixed with the namespace); without it, each process counts in memory.
 * When Redis is unreachable, an in-memory limiter stands in (counts per instance) rather than
 * failing requests.
 */
export function createRateLimitHooks(config: Config, logger: Logger, redis?: Redis): RateLimitHandles {
  let ownRedis: Redis | null = null;
  let client: Redis | null = redis ?? null;
  if (!client && config.redisUrl) {
    ownRedis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
    ownRedis.on('error', (err) => logger.warn({ msg: 'redis error', err: err.message }));
    client = ownRedis;
  }

  // Every in-memory count keeps a timer until its window ends (up to an hour); close() forgets
  // them, so that stopped hooks hold nothing (their timers kept them, and all they reached, alive).
  const memories: RateLimiterMemory[] = [];
  const limiter = (name: string, points: number, duration: number): RateLimiterAbstract => {
    const memory = new RateLimiterMemory({ keyPrefix: `${config.namespace}:rl:${name}`, points, duration });
    memories.push(memory);
    if (!client) return memory;
    return new RateLimiterRedis({
      storeClient: client,
      keyPrefix: `${config.namespace}:rl:${name}`,
      points,
      duration,
      rejectIfRedisNotReady: true,
      insuranceLimiter: memory,
    });
  };

  const rest = limiter('rest', config.rateLimitRestPerHour, HOUR);
  const graphql = limiter('graphql', config.rateLimitGraphqlPerHour, HOUR);
  const authFailures = limiter('authfail', config.authFailureLimit, AUTH_FAILURE_WINDOW);
  const accountFailures = limiter('signinfail', ACCOUNT_FAILURE_LIMIT, AUTH_FAILURE_WINDOW);
  const signInsPerAccount = limiter('signin-account', config.signInsPerAccount, SIGN_IN_WINDOW);
  const signInsPerAddress = limiter('signin-address', config.signInsPerAddress, SIGN_IN_WINDOW);
  const deviceFailures = limiter('devicefail', config.deviceLoginFailureBudget, DEVICE_FAILURE_WINDOW);
  const addressBudgets: Record<AddressBudget, { limiter: RateLimiterAbstract; points: number }> = {
    anonymous: { limiter: limiter('anon', config.anonymousRequestsPerMinute, MINUTE), points: config.anonymousRequestsPerMinute },
    signUp: { limiter: limiter('signup', config.signUpsPerHour, HOUR), points: config.signUpsPerHour },
    // Reads of share links (SHARE_READS_PER_MINUTE).
    shareReads: { limiter: limiter('sharereads', config.shareReadsPerMinute, MINUTE), points: config.shareReadsPerMinute },
    // MCP connectors' client registrations and token requests (OAUTH_REGISTRATIONS_PER_HOUR, OAUTH_TOKEN_REQUESTS_PER_MINUTE).
    oauthRegister: { limiter: limiter('oauthreg', config.oauth.registrationsPerHour, HOUR), points: config.oauth.registrationsPerHour },
    oauthToken: { limiter: limiter('oauthtoken', config.oauth.tokenRequestsPerMinute, MINUTE), points: config.oauth.tokenRequestsPerMinute },
  };
  /** The one key of the service-wide device-login budget. */
  const ALL = 'all';
  // Emails compare case-insensitively (the column's collation): one budget per account, however spelt.
  const accountKey = (email: string) => email.trim().toLowerCase().slice(0, 320);

  const perUser = (l: RateLimiterAbstract, limit: number, kind: RateLimitKind) => async (req: Request, res: Response, next: NextFunction) => {
    const userId = req.user?.id;
    if (!userId) return next();
    try {
      const r = await l.consume(userId, 1);
      // Answered meanwhile (the database watchdog's 503): nothing more to do for this request.
      if (res.headersSent) return;
      setHeaders(res, limit, r, false);
      next();
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        setHeaders(res, limit, err, true);
        return next(rateLimited(req, err, kind));
      }
      // Store failure with no insurance left: let the request through rather than fail it.
      logger.warn({ reqId: req.id, msg: 'rate limiter unavailable', err: err instanceof Error ? err.message : String(err) });
      next();
    }
  };

  const address = (req: Request) => clientKeyOf(req.ip ?? req.socket.remoteAddress ?? 'unknown');

  /** Spends a point; over the limit → the 429 (with its headers); a store failure lets the request through. */
  const spend = async (req: Request, l: RateLimiterAbstract, key: string, limit: number, kind: RateLimitKind) => {
    try {
      await l.consume(key, 1);
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        if (req.res) setHeaders(req.res, limit, err, true);
        throw rateLimited(req, err, kind);
      }
      logger.warn({ reqId: req.id, msg: `${kind} limiter unavailable` });
    }
  };
  /** Refuses when the count is already at the limit (a read: nothing is spent). */
  const refuseWhenSpent = async (req: Request, l: RateLimiterAbstract, key: string, limit: number, kind: RateLimitKind) => {
    let r: RateLimiterRes | null = null;
    try {
      r = await l.get(key);
    } catch {
      return;
    }
    if (r && r.consumedPoints >= limit) {
      if (req.res) setHeaders(req.res, limit, r, true);
      throw rateLimited(req, r, kind);
    }
  };

  return {
    rest: perUser(rest, config.rateLimitRestPerHour, 'rest'),
    graphql: perUser(graphql, config.rateLimitGraphqlPerHour, 'graphql'),
    async beforeAuth(req) {
      let r: RateLimiterRes | null = null;
      try {
        r = await authFailures.get(address(req));
      } catch {
        return;
      }
      if (r && r.consumedPoints > config.authFailureLimit) {
        if (req.res) setHeaders(req.res, config.authFailureLimit, r, true);
        throw rateLimited(req, r, 'auth_failure');
      }
    },
    async onAuthFailure(req) {
      try {
        await authFailures.consume(address(req), 1);
      } catch (err) {
        if (err instanceof RateLimiterRes) {
          if (req.res) setHeaders(req.res, config.authFailureLimit, err, true);
          throw rateLimited(req, err, 'auth_failure');
        }
        logger.warn({ reqId: req.id, msg: 'auth failure limiter unavailable' });
      }
    },
    async beforeSignIn(req, email) {
      // Failed sign-ins of the account, then its successful ones and the address's: all reads.
      await refuseWhenSpent(req, accountFailures, accountKey(email), ACCOUNT_FAILURE_LIMIT, 'sign_in_failure');
      await refuseWhenSpent(req, signInsPerAccount, accountKey(email), config.signInsPerAccount, 'sign_in');
      await refuseWhenSpent(req, signInsPerAddress, address(req), config.signInsPerAddress, 'sign_in');
    },
    async onSignInFailure(req, email) {
      await spend(req, accountFailures, accountKey(email), ACCOUNT_FAILURE_LIMIT, 'sign_in_failure');
    },
    async onSignInSuccess(req, email) {
      await spend(req, signInsPerAccount, accountKey(email), config.signInsPerAccount, 'sign_in');
      await spend(req, signInsPerAddress, address(req), config.signInsPerAddress, 'sign_in');
    },
    async spendAddress(req, budget) {
      const b = addressBudgets[budget];
      await spend(req, b.limiter, address(req), b.points, BUDGET_KIND[budget]);
    },
    async beforeDeviceLogin(req) {
      await refuseWhenSpent(req, deviceFailures, ALL, config.deviceLoginFailureBudget, 'device_login');
    },
    async onDeviceLoginFailure(req) {
      // Counted even past the budget: the window's end is what lets logins through again.
      try {
        await deviceFailures.consume(ALL, 1);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) logger.warn({ reqId: req.id, msg: 'device login limiter unavailable' });
      }
    },
    ready() {
      const redis = client;
      if (!redis || redis.status === 'ready') return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          redis.off('ready', done);
          resolve();
        };
        const timer = setTimeout(() => {
          logger.warn({ msg: `redis not ready after ${REDIS_READY_MS} ms: rate limits are counted per instance until it is` });
          done();
        }, REDIS_READY_MS);
        redis.once('ready', done);
      });
    },
    async close() {
      if (ownRedis) {
        ownRedis.disconnect();
        ownRedis = null;
      }
      for (const memory of memories) await Promise.all(memory.dump().storage.map(({ key }) => memory.delete(key)));
    },
  };
}

const CLIENT_KEYS_MAX = 10_000;
const clientKeys = new Map<string, string>();

/**
 * The failed-authentication limit's key for a client address: an IPv4 address as
 * it is, an IPv6 client by its /64 (one host usually has a whole /64 to pick addresses from).
 * IPv4-mapped IPv6 (`::ffff:a.b.c.d`) counts as the IPv4 address.
 */
export function clientKeyOf(ip: string): string {
  let key = clientKeys.get(ip);
  if (key === undefined) {
    // A bounded memo: the same few addresses ask again and again; a flood of new ones only refills it.
    if (clientKeys.size >= CLIENT_KEYS_MAX) clientKeys.clear();
    clientKeys.set(ip, (key = keyOfAddress(ip)));
  }
  return key;
}

function keyOfAddress(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (net.isIPv6(ip.split('%')[0])) return `${prefix64(ip)}::/64`;
  return ip;
}

/** The first four groups of an IPv6 address, expanded (`2001:db8::1` → `2001:db8:0:0`). */
function prefix64(ip: string): string {
  const addr = ip.split('%')[0];
  const [head, tail = ''] = addr.includes('::') ? addr.split('::') : [addr];
  const h = head ? head.split(':') : [];
  let groups: string[];
  if (addr.includes('::')) {
    const t = tail ? tail.split(':') : [];
    // An embedded IPv4 tail takes two groups.
    const tailLen = t.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
    groups = [...h, ...Array<string>(8 - h.length - tailLen).fill('0'), ...t];
  } else groups = h;
  return groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':');
}
