/**
 * The scale rehearsal: several service instances (no load balancer: the clients go round-robin),
 * with their own Redis and search engine and one database, driven with uploads, reads and searches
 * while one instance is killed (SIGKILL) mid-run (with --replica, the replica too, later). Prints what held:
 *   - no acknowledged write lost: every upload answered 200/201 reads back, byte for byte, at the
 *     end (or a later attempt of the same client on that session, whose answer it never got);
 *   - read-your-writes: every read during the run returns the client's own last acknowledged version;
 *   - no 5xx other than the documented 503s ('Server busy, retry later', 'Service temporarily
 *     unavailable'), listed by message;
 *   - upload, read and search latencies (p50 / p95).
 * A request that cannot connect (the killed instance) goes to the next instance, as a client
 * behind a load balancer would see it; one cut off mid-flight is counted, and its write is
 * "unknown" (neither acknowledged nor refused).
 *
 *   npm run rehearse -- [--seconds=60] [--instances=3] [--clients=12] [--users=4] [--no-kill]
 *   npm run rehearse -- --quick        # 20 s
 *
 * The topology is a list of parts (database, redis, engine, and the switches below), each starting
 * what it needs, adding environment to every instance, and offering faults to inject mid-run:
 *   --s3         CONTENT_STORE=s3 on an s3rver of its own
 *   --replica    a primary and its replica of our own (DATABASE_REPLICA_URL); fault: the replica killed
 *   --engines=N  MEILI_URLS with N engines instead of one; --standby[=K]: a standby for each of the
 *                first K engines (default all); fault: engine 1 SIGKILLed (searches of its scopes
 *                must go on through its standby: counted after the kill)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { engineKill, enginePart, redisPart, replicaPart, sharedDatabasePart, SWITCHES, type Fault, type Part, type Run } from './rehearse-parts';
import { arg, BenchServer, percentile, request, seedUsers, sleep, type BenchUser, type Reply } from './support';

const QUICK = process.argv.includes('--quick');
const SECONDS = Number(arg('seconds') ?? (QUICK ? 20 : 60));
const INSTANCES = Number(arg('instances') ?? 3);
const CLIENTS = Number(arg('clients') ?? 12);
const USERS = Number(arg('users') ?? 4);
const KILL = !process.argv.includes('--no-kill');
const log = (s: string) => process.stdout.write(`${s}\n`);

interface Stats {
  ms: Record<'upload' | 'read' | 'search', number[]>;
  statuses: Map<string, number>;
  /** 5xx other than the documented 503s: what was asked, what came back. */
  violations: string[];
  busy: Map<string, number>;
  cutOff: number;
  rerouted: number;
  /** Reads that did not return the client's own last acknowledged version. */
  stale: number;
  /** Searches answered after an engine was killed: found, and answered SERVICE_UNAVAILABLE. */
  afterEngineKill: { ok: number; unavailable: number };
}

const DOCUMENTED_503 = ['Server busy, retry later', 'Service temporarily unavailable'];

/** Counts an answer; a GraphQL error counts by its code (SERVICE_UNAVAILABLE as a 503, INTERNAL_SERVER_ERROR as a 500). */
function note(stats: Stats, what: string, r: Reply): void {
  const gqlError = (r.json as { errors?: Array<{ message: string; extensions?: { code?: string } }> } | undefined)?.errors?.[0];
  const code = gqlError?.extensions?.code;
  const status = code === 'SERVICE_UNAVAILABLE' ? 503 : code === 'INTERNAL_SERVER_ERROR' ? 500 : r.status;
  const key = `${what} ${status}${code && status < 500 ? ` ${code}` : ''}`;
  stats.statuses.set(key, (stats.statuses.get(key) ?? 0) + 1);
  if (status < 500) return;
  const message = String(gqlError?.message ?? r.json?.error ?? r.text.slice(0, 80));
  if (status === 503 && DOCUMENTED_503.some((m) => message.startsWith(m))) stats.busy.set(message, (stats.busy.get(message) ?? 0) + 1);
  else stats.violations.push(`${what} → ${status} ${message}`);
}

/** A session a client wrote: the digest it last had acknowledged, and those of later attempts it never heard back about. */
interface Written {
  user: BenchUser;
  project: string;
  id: string;
  acked: string | null;
  unknown: string[];
  word: string;
}

const WORDS = 'retry backoff socket parser schema migration index token cache deploy branch commit review queue worker'.split(' ');
const digest = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

async function main(): Promise<void> {
  const chosen = Object.keys(SWITCHES).filter((k) => process.argv.some((a) => a === `--${k}` || a.startsWith(`--${k}=`)));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-rehearse-'));
  /** The instances' output, kept after the run. */
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-rehearse-logs-'));
  const database = process.argv.includes('--replica') ? replicaPart() : sharedDatabasePart();
  const engines = chosen.includes('engines') ? [] : [enginePart()];
  const parts: Part[] = [database, redisPart(), ...engines, ...chosen.map((k) => SWITCHES[k]())];
  const started: Part[] = [];
  const servers: BenchServer[] = [];
  try {
    const run: Run = { db: null, dir };
    const env: Record<string, string> = {};
    for (const p of parts) {
      Object.assign(env, await p.start(run));
      started.push(p);
    }
    const db = run.db!;
    const users = await seedUsers(
      db.url,
      Array.from({ length: USERS }, (_, i) => ({ email: `rehearse-${i}@example.test` })),
    );
    // Every instance: the same database, Redis and engines; search workers on (they share the outbox).
    for (let i = 0; i < INSTANCES; i++) {
      servers.push(
        await BenchServer.start({
          name: `instance ${i + 1}`,
          output: { file: path.join(logDir, `instance-${i + 1}.log`) },
          ready: '/readyz',
          env: {
            WORKERS_ENABLED: 'true',
            RATE_LIMIT_REST_PER_HOUR: '100000000',
            RATE_LIMIT_GRAPHQL_PER_HOUR: '100000000',
            AUTH_FAILURE_LIMIT: '100000000',
            ...env,
            DATABASE_URL: env.DATABASE_URL,
          },
        }),
      );
    }
    log(`rehearsal: ${INSTANCES} instances, ${CLIENTS} clients, ${USERS} users, ${SECONDS} s; parts: ${started.map((p) => p.name).join(', ')}`);
    const faults: Fault[] = [
      ...(KILL && INSTANCES > 1 ? [{ name: `SIGKILL ${servers[1].name}`, inject: () => servers[1].kill() }] : []),
      ...started.flatMap((p) => p.faults?.() ?? []),
    ];

    const stats: Stats = {
      ms: { upload: [], read: [], search: [] },
      statuses: new Map(),
      violations: [],
      busy: new Map(),
      cutOff: 0,
      rerouted: 0,
      stale: 0,
      afterEngineKill: { ok: 0, unavailable: 0 },
    };
    const agents = servers.map(() => new http.Agent({ keepAlive: true, maxSockets: CLIENTS }));
    let turn = 0;
    /** Round-robin over the instances; one that does not accept the connection is skipped. */
    const send = async (p: string, o: Parameters<typeof request>[1]): Promise<Reply | null> => {
      for (let tries = 0; tries < servers.length; tries++) {
        const i = turn++ % servers.length;
        try {
          return await request(`${servers[i].url}${p}`, { ...o, agent: agents[i] });
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') {
            stats.rerouted++;
            continue;
          }
          stats.cutOff++;
          return null;
        }
      }
      return null;
    };

    const written: Written[] = [];
    const deadline = Date.now() + SECONDS * 1000;
    // The faults spread over the run: with two, at a third and two thirds of it.
    const startedAt = Date.now();
    const startedAtPerf = performance.now();
    const faultsDone = (async () => {
      for (const [k, f] of faults.entries()) {
        await sleep(Math.max(0, startedAt + ((k + 1) * SECONDS * 1000) / (faults.length + 1) - Date.now()));
        log(`  [${((Date.now() - startedAt) / 1000).toFixed(1)} s] fault: ${f.name}`);
        await f.inject();
      }
    })();

    const client = async (c: number) => {
      const user = users[c % users.length];
      const mine: Written[] = [];
      let n = 0;
      while (Date.now() < deadline) {
        const roll = (c * 7919 + n++ * 104729) % 10;
        if (roll < 4 || mine.length === 0) {
          // An upload: a new session, or (one in four) a new version of one of this client's own.
          const update = mine.length > 0 && roll === 0;
          const w: Written = update
            ? mine[n % mine.length]
            : { user, project: `rehearse-${c % users.length}-${c % 3}`, id: crypto.randomUUID(), acked: null, unknown: [], word: `rh${c}x${n}` };
          const markdown = `# ${w.word}\n\n${Array.from({ length: 200 + (n % 400) }, (_, i) => WORDS[(i * 31 + n) % WORDS.length]).join(' ')}\n\n${w.word} ${n}\n`;
          const t = performance.now();
          const r = await send(`/api/v1/projects/${w.project}/sessions/${w.id}`, { method: 'PUT', token: user.token, body: { name: w.word, markdown } });
          if (!update) {
            mine.push(w);
            written.push(w);
          }
          if (!r) w.unknown.push(digest(markdown));
          else {
            note(stats, 'upload', r);
            if (r.status === 200 || r.status === 201) {
              stats.ms.upload.push(performance.now() - t);
              w.acked = digest(markdown);
              w.unknown = [];
            }
          }
        } else if (roll < 8) {
          const w = mine[n % mine.length];
          if (!w.acked) continue;
          const t = performance.now();
          const r = await send(`/api/v1/projects/${w.project}/sessions/${w.id}`, { token: user.token, headers: { Accept: 'text/markdown' } });
          if (r) {
            note(stats, 'read', r);
            if (r.status === 200) {
              stats.ms.read.push(performance.now() - t);
              // The client's own last acknowledged write (read-your-writes), whichever instance answers.
              const got = digest(r.text);
              if (got !== w.acked && !w.unknown.includes(got)) stats.stale++;
            }
          }
        } else {
          const w = mine[n % mine.length];
          const t = performance.now();
          const r = await send('/api/v1/graphql', {
            method: 'POST',
            token: user.token,
            body: { query: 'query($q: String!) { searchSessions(query: $q, limit: 10) { total results { sessionId } } }', variables: { q: `${w.word} retry` } },
          });
          if (r) {
            note(stats, 'search', r);
            const ok = r.status === 200 && !r.json?.errors;
            if (ok) stats.ms.search.push(performance.now() - t);
            if (t > engineKill.at - startedAt + startedAtPerf) stats.afterEngineKill[ok ? 'ok' : 'unavailable']++;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    await faultsDone;
    agents.forEach((a) => a.destroy());

    // Every acknowledged write reads back from a surviving instance.
    const alive = servers.filter((s) => s.alive);
    let verified = 0;
    const lost: string[] = [];
    const acked = written.filter((w) => w.acked);
    for (const [i, w] of acked.entries()) {
      const r = await request(`${alive[i % alive.length].url}/api/v1/projects/${w.project}/sessions/${w.id}`, {
        token: w.user.token,
        headers: { Accept: 'text/markdown' },
      });
      const got = r.status === 200 ? digest(r.text) : `status ${r.status}`;
      if (got === w.acked || w.unknown.includes(got)) verified++;
      else lost.push(`${w.project}/${w.id}: ${got === `status ${r.status}` ? got : 'other content'}`);
    }

    const row = (label: string, xs: number[]) =>
      xs.length
        ? `  ${label.padEnd(8)} ${String(xs.length).padStart(6)} ok   p50 ${percentile(xs, 50).toFixed(1).padStart(7)} ms   p95 ${percentile(xs, 95).toFixed(1).padStart(7)} ms`
        : `  ${label}: none`;
    log('');
    log(row('upload', stats.ms.upload));
    log(row('read', stats.ms.read));
    log(row('search', stats.ms.search));
    log(`  answers: ${[...stats.statuses].map(([k, v]) => `${k}×${v}`).join(', ')}`);
    log(`  connections refused (rerouted to the next instance): ${stats.rerouted}; cut off mid-request: ${stats.cutOff}`);
    log(`  documented 503s: ${stats.busy.size ? [...stats.busy].map(([m, v]) => `${v}× ${m}`).join(', ') : 'none'}`);
    log(`  other 5xx: ${stats.violations.length}${stats.violations.length ? ` (first: ${stats.violations.slice(0, 5).join('; ')})` : ''}`);
    log(
      `  acknowledged sessions: ${acked.length}, read back intact: ${verified}, lost: ${lost.length}${lost.length ? ` (first: ${lost.slice(0, 5).join('; ')})` : ''}`,
    );
    log(`  reads of the client's own last write that returned another version: ${stats.stale}`);
    const searchHeld = engineKill.at === Infinity || stats.afterEngineKill.unavailable === 0;
    if (engineKill.at !== Infinity)
      log(`  searches after the engine was killed: ${stats.afterEngineKill.ok} answered, ${stats.afterEngineKill.unavailable} failed`);
    log(`  instance logs: ${logDir}`);
    const held = lost.length === 0 && stats.violations.length === 0 && stats.stale === 0 && searchHeld;
    log(
      `\n${held ? 'HELD' : 'DID NOT HOLD'}: no acknowledged write lost ${lost.length === 0 ? 'yes' : 'NO'}; no undocumented 5xx ${stats.violations.length === 0 ? 'yes' : 'NO'}; read-your-writes ${stats.stale === 0 ? 'yes' : 'NO'}${engineKill.at === Infinity ? '' : `; searches through an engine kill ${searchHeld ? 'yes' : 'NO'}`}`,
    );
    if (!held) process.exitCode = 1;
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    for (const p of started.reverse()) await p.stop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
