/**
 * What the benches share: a free port, an HTTP client on node:http (never the global `fetch`: it
 * stalls ~45 ms on responses of a few KB on loopback, which would swamp what is measured), the
 * real server as a child process (started, waited for, stopped), and a fresh database with users
 * and keys. Each bench keeps only what it measures.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as mariadb from 'mariadb';
import { createDb } from '../src/db/client';
import { operatorCtx } from '../src/services/context';
import { createApiKey } from '../src/services/keys';
import { createUser } from '../src/services/users';
import { createTestDatabase, ROOT_URL, type TestDatabase } from '../test/support/db';

/** The checkout the benches belong to. */
export const ROOT = path.resolve(__dirname, '..');

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The value of `--name=value` on the command line, if given. */
export const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

/** The p-th percentile (nearest rank) of xs. */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1))];
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body as received (empty when `keep` is false; its first `keep` bytes when a number). */
  body: Buffer;
  /** Bytes received, kept or not. */
  bytes: number;
  /** From sending to the last byte. */
  ms: number;
  /** From sending to the first byte of the body (-1: there was none). */
  firstByteMs: number;
  /** The kept body as UTF-8. */
  readonly text: string;
  /** The kept body parsed as JSON (undefined when it is not JSON). */
  readonly json: any;
}

export interface RequestOptions {
  method?: string;
  /** Sent as `Authorization: Bearer …` when non-empty. */
  token?: string;
  /** A Buffer or string is sent as is, anything else as JSON; both with Content-Type JSON unless `headers` say otherwise. */
  body?: Buffer | string | object;
  headers?: Record<string, string>;
  /** Default: no agent (a connection per request); pass a keep-alive agent to reuse connections. */
  agent?: http.Agent | false;
  /** Keep the body (default), drop it (count bytes only), or keep its first N bytes. */
  keep?: boolean | number;
  /** Resolve with status -1 instead of rejecting on a connection error. */
  tolerant?: boolean;
  /** Retry a connection-level failure (ECONNRESET, ECONNREFUSED, EPIPE) this many more times. */
  retries?: number;
}

function reply(status: number, headers: http.IncomingHttpHeaders, body: Buffer, bytes: number, ms: number, firstByteMs: number): Reply {
  return {
    status,
    headers,
    body,
    bytes,
    ms,
    firstByteMs,
    get text() {
      return body.toString('utf8');
    },
    get json() {
      try {
        return JSON.parse(body.toString('utf8'));
      } catch {
        return undefined;
      }
    },
  };
}

function requestOnce(url: string | URL, o: RequestOptions): Promise<Reply> {
  const payload =
    o.body === undefined ? undefined : Buffer.isBuffer(o.body) ? o.body : Buffer.from(typeof o.body === 'string' ? o.body : JSON.stringify(o.body));
  const headers: Record<string, string> = {
    ...(o.token ? { Authorization: `Bearer ${o.token}` } : {}),
    ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}),
    ...o.headers,
  };
  const keep = o.keep ?? true;
  const limit = keep === true ? Infinity : keep === false ? 0 : keep;
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(url, { method: o.method ?? 'GET', agent: o.agent ?? false, headers }, (res) => {
      const parts: Buffer[] = [];
      let bytes = 0;
      let kept = 0;
      let firstByteMs = -1;
      res.on('data', (c: Buffer) => {
        if (firstByteMs < 0) firstByteMs = performance.now() - t0;
        bytes += c.length;
        if (kept < limit) {
          const part = kept + c.length > limit ? c.subarray(0, limit - kept) : c;
          parts.push(part);
          kept += part.length;
        }
      });
      res.on('end', () => resolve(reply(res.statusCode ?? 0, res.headers, Buffer.concat(parts), bytes, performance.now() - t0, firstByteMs)));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** One HTTP request on node:http. */
export async function request(url: string | URL, options: RequestOptions = {}): Promise<Reply> {
  const t0 = performance.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await requestOnce(url, options);
    } catch (err) {
      const transient = /ECONNRESET|ECONNREFUSED|EPIPE|socket hang up/.test(String((err as Error).message));
      if (transient && attempt < (options.retries ?? 0)) {
        await sleep(200 * (attempt + 1));
        continue;
      }
      if (options.tolerant) return reply(-1, {}, Buffer.alloc(0), 0, performance.now() - t0, -1);
      throw err;
    }
  }
}

/**
 * A `fetch` made of node:http on `agent` (for clients that take a fetch, such as the MCP SDK's
 * transport), without the global fetch's stall on responses of a few KB.
 */
export function nodeFetch(agent: http.Agent): typeof fetch {
  return async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const u = new URL(input instanceof Request ? input.url : input);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    const body = init.body == null ? undefined : typeof init.body === 'string' ? init.body : Buffer.from(await new Response(init.body).arrayBuffer());
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    return new Promise((resolve, reject) => {
      const req = http.request(u, { method: init.method ?? 'GET', headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : v);
          const status = res.statusCode ?? 0;
          resolve(new Response([204, 205, 304].includes(status) ? null : Buffer.concat(chunks), { status, headers: out }));
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  };
}

/** Waits until `url` answers (by default: any status below 500). */
export async function waitFor(url: string, { timeoutMs = 120_000, ok = (s: number) => s > 0 && s < 500 } = {}): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await request(url, { tolerant: true, keep: false });
    if (ok(r.status)) return;
    if (Date.now() > until) throw new Error(`${url} did not come up in ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

/** The JWT_SECRET servers started here use unless told otherwise (keys made for them are signed with it). */
export const BENCH_JWT_SECRET = 'bench-secret-that-is-long-enough';

export interface ServerOptions {
  /** Over process.env and the defaults (PORT, DATA_DIR, JWT_SECRET, LOG_LEVEL=warn, WORKERS_ENABLED=false); undefined removes one. */
  env: Record<string, string | undefined> & { DATABASE_URL: string };
  /** What node runs (default: the sources through tsx; `['dist/src/main.js']` for the build). */
  entry?: string[];
  /** Node flags before the entry (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** The checkout to run (default this one). */
  cwd?: string;
  /** Where the server's output goes: inherited (default), dropped, stderr only, or appended to a file. */
  output?: 'inherit' | 'ignore' | 'stderr' | { file: string };
  /** The path waited for before start() returns; default /healthz. */
  ready?: string;
  /** Which status of `ready` means ready; default 200. */
  readyStatus?: (status: number) => boolean;
  /** A label for messages. */
  name?: string;
}

/**
 * A server as a child process in a process group of its own (stop() ends the group, so an
 * embedded engine it started goes with it). A temporary DATA_DIR is made unless env gives one, and
 * removed by stop().
 */
export class BenchServer {
  private stopping = false;
  readonly exited: Promise<void>;
  private constructor(
    readonly proc: ChildProcess,
    readonly url: string,
    readonly port: number,
    readonly dataDir: string,
    private readonly ownDataDir: boolean,
    readonly name: string,
  ) {
    this.exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    proc.once('exit', (code, signal) => {
      if (!this.stopping) console.error(`${name} exited unexpectedly (code ${code}, signal ${signal})`);
    });
  }

  get pid(): number {
    return this.proc.pid!;
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  static async start(o: ServerOptions): Promise<BenchServer> {
    const port = await freePort();
    const ownDataDir = !o.env.DATA_DIR;
    const dataDir = o.env.DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sa-bench-'));
    const output = o.output ?? 'inherit';
    let stdio: StdioOptions;
    let fd: number | null = null;
    if (typeof output === 'object') {
      fd = fs.openSync(output.file, 'a');
      stdio = ['ignore', fd, fd];
    } else stdio = output === 'stderr' ? ['ignore', 'ignore', 'inherit'] : output === 'ignore' ? 'ignore' : ['ignore', 'inherit', 'inherit'];
    const proc = spawn(process.execPath, [...(o.nodeArgs ?? []), ...(o.entry ?? ['--import', 'tsx', 'src/main.ts'])], {
      cwd: o.cwd ?? ROOT,
      // An undefined value in `env` removes the variable (the server's own default applies).
      env: Object.fromEntries(
        Object.entries({
          ...process.env,
          PORT: String(port),
          DATA_DIR: dataDir,
          JWT_SECRET: BENCH_JWT_SECRET,
          LOG_LEVEL: 'warn',
          WORKERS_ENABLED: 'false',
          ...o.env,
        }).filter(([, v]) => v !== undefined),
      ),
      stdio,
      detached: true,
    });
    if (fd !== null) fs.closeSync(fd);
    const server = new BenchServer(proc, `http://127.0.0.1:${port}`, port, dataDir, ownDataDir, o.name ?? 'server');
    try {
      const ready = `${server.url}${o.ready ?? '/healthz'}`;
      const until = Date.now() + 120_000;
      for (;;) {
        if (!server.alive) throw new Error(`${server.name} exited before it was ready`);
        const { status } = await request(ready, { tolerant: true, keep: false });
        if (status > 0 && (o.readyStatus ?? ((s) => s === 200))(status)) break;
        if (Date.now() > until) throw new Error(`${server.name} did not become ready`);
        await sleep(100);
      }
    } catch (err) {
      await server.stop();
      throw err;
    }
    return server;
  }

  /** SIGTERM (a profiled server writes its profile as it exits), then the whole group after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    if (this.alive) {
      this.proc.kill('SIGTERM');
      await Promise.race([this.exited, sleep(graceMs)]);
    }
    this.kill();
    if (this.ownDataDir) fs.rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** SIGKILL to the whole group at once (a crash, as far as the server can tell). */
  kill(): void {
    this.stopping = true;
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      /* gone already */
    }
  }
}

export interface BenchUser {
  id: string;
  email: string;
  /** An API key's token, signed with the secret given to seedUsers. */
  token: string;
}

/** Users (with a password when given) and one API key each, on the database at `url`. */
export async function seedUsers(
  url: string,
  users: Array<{ email: string; name?: string; password?: string; role?: 'admin' | 'member' }>,
  secret = BENCH_JWT_SECRET,
): Promise<BenchUser[]> {
  const db = createDb(url);
  try {
    const out: BenchUser[] = [];
    for (const u of users) {
      const opts = { ...(u.password ? { password: u.password } : {}), ...(u.role ? { role: u.role } : {}) };
      const created = await createUser(operatorCtx(db), u.email, u.name ?? 'bench', opts);
      const { token } = await createApiKey(operatorCtx(db, { jwtSecret: secret }), { name: 'bench' }, created.id);
      out.push({ id: created.id, email: u.email, token });
    }
    return out;
  } finally {
    await db.close();
  }
}

export type BenchDatabase = TestDatabase;

/** A database by name on the test server (e.g. one a server created itself), with drop(). */
export function databaseNamed(name: string): BenchDatabase {
  return {
    name,
    url: `${ROOT_URL}/${name}`,
    async drop() {
      const u = new URL(ROOT_URL);
      const conn = await mariadb.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: u.username || 'root' });
      try {
        await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await conn.end();
      }
    },
  };
}

/** A fresh, migrated database named `<prefix>_<random>` (on the server at rootUrl, by default the shared one); drop() removes it. */
export function freshDatabase(prefix: string, rootUrl = ROOT_URL): Promise<BenchDatabase> {
  return createTestDatabase(prefix, rootUrl);
}

/** A fresh database with one user and their key: the start of most benches. */
export async function freshDatabaseWithUser(prefix: string, secret = BENCH_JWT_SECRET): Promise<{ db: BenchDatabase; user: BenchUser }> {
  const db = await freshDatabase(prefix);
  try {
    const [user] = await seedUsers(db.url, [{ email: `${prefix}-${crypto.randomBytes(3).toString('hex')}@example.test` }], secret);
    return { db, user };
  } catch (err) {
    await db.drop();
    throw err;
  }
}
