/** The parts of the scale rehearsal's topology (bench/rehearse.ts): what each starts, tells the instances, and can break. */
import net from 'node:net';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { EmbeddedMeili } from '../src/search/embedded/embedded';
import { startMariadbPair, type MariadbPair } from '../test/support/mariadb-pair';
import { TestEngines } from '../test/support/meili-engines';
import { bucketFor, createBucket, s3Env, startS3rver, type TestS3 } from '../test/support/s3';
import { arg, freePort, freshDatabase, sleep, type BenchDatabase } from './support';

/** A fault a part can inject mid-run (kill an instance, an engine, the replica). */
export interface Fault {
  name: string;
  inject(): void | Promise<void>;
}

/** One piece of the topology: what it starts, what it tells every instance, what can break. */
export interface Part {
  name: string;
  /** Starts what the part needs; returns the environment every instance gets from it. */
  start(run: Run): Promise<Record<string, string>>;
  faults?(): Fault[];
  stop(): Promise<void>;
}

export interface Run {
  /** Set by the database part: the database (root access, for seeding), before any other part starts. */
  db: BenchDatabase | null;
  dir: string;
}

/** The one MariaDB of the machine: a fresh database on it. */
export function sharedDatabasePart(): Part {
  let db: BenchDatabase | null = null;
  return {
    name: 'mariadb',
    async start(run) {
      db = run.db = await freshDatabase('sa_rehearse');
      return { DATABASE_URL: db.url, NAMESPACE: db.name };
    },
    async stop() {
      await db?.drop();
    },
  };
}

/**
 * --replica: a primary and its GTID replica of our own (test/support/mariadb-pair.ts); the
 * instances connect as an unprivileged user, so the replica's read_only applies. Fault: the
 * replica is killed (reads must fall back to the primary, never an error).
 */
export function replicaPart(): Part {
  let pair: MariadbPair | null = null;
  return {
    name: 'primary + replica',
    async start(run) {
      pair = await startMariadbPair();
      const db = (run.db = await freshDatabase('sa_rehearse', pair.primary.rootUrl));
      await pair.synced();
      return {
        DATABASE_URL: `${pair.primary.appUrl}/${db.name}`,
        DATABASE_REPLICA_URL: `${pair.replica.appUrl}/${db.name}`,
        NAMESPACE: db.name,
      };
    },
    faults: () => [{ name: 'SIGKILL the replica', inject: () => pair!.replica.kill() }],
    async stop() {
      await pair?.close();
    },
  };
}

/** True when a Redis on `port` answers PING. */
function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write('PING\r\n'));
    sock.setTimeout(500, () => (sock.destroy(), resolve(false)));
    sock.on('data', (d) => (sock.destroy(), resolve(d.toString().startsWith('+PONG'))));
    sock.on('error', () => resolve(false));
  });
}

/** Redis of its own (rate limits, shared by the instances), on a free port, nothing saved. */
export function redisPart(): Part {
  let proc: ChildProcess | null = null;
  return {
    name: 'redis',
    async start() {
      const port = await freePort();
      proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      const url = `redis://127.0.0.1:${port}`;
      for (let i = 0; ; i++) {
        if (await redisPing(port)) break;
        if (i > 100 || proc.exitCode !== null) throw new Error('redis-server did not start');
        await sleep(100);
      }
      return { REDIS_URL: url };
    },
    async stop() {
      proc?.kill('SIGKILL');
      await sleep(0);
    },
  };
}

/** One search engine of the harness's own (the instances share it; none embeds one). */
export function enginePart(): Part {
  let engine: EmbeddedMeili | null = null;
  return {
    name: 'engine',
    async start(run) {
      engine = new EmbeddedMeili({ dataDir: path.join(run.dir, 'engine') });
      await engine.start();
      return { MEILI_URL: engine.url!, MEILI_MASTER_KEY: engine.masterKey };
    },
    async stop() {
      await engine?.stop();
    },
  };
}

/** When an engine was killed (the --engines fault): searches after it are counted apart. */
export const engineKill = { at: Infinity };

/**
 * --engines=N [--standby[=K]]: N engines (MEILI_URLS) and K standbys (MEILI_STANDBY_URLS, for the
 * first K engines), all started here with one master key (test/support/meili-engines.ts); the
 * fault kills the first engine (SIGKILL), which has a standby when there is one.
 */
function enginesPart(): Part {
  const n = Number(arg('engines') ?? 2);
  const standbyArg = process.argv.find((a) => a === '--standby' || a.startsWith('--standby='));
  const k = standbyArg === undefined ? 0 : standbyArg === '--standby' ? n : Number(standbyArg.split('=')[1]);
  let set: TestEngines | null = null;
  return {
    name: `${n} engines + ${k} standby`,
    async start() {
      set = await TestEngines.start(n + k);
      const urls = set.urls();
      const standbys = Array.from({ length: n }, (_, i) => (i < k ? urls[n + i] : ''));
      return { MEILI_URLS: urls.slice(0, n).join(','), MEILI_MASTER_KEY: set.key, ...(k > 0 ? { MEILI_STANDBY_URLS: standbys.join(',') } : {}) };
    },
    faults: () => [
      {
        name: `SIGKILL engine 0${k > 0 ? ' (it has a standby)' : ''}`,
        inject: () => {
          engineKill.at = Date.now();
          set!.kill(0);
        },
      },
    ],
    async stop() {
      await set?.stop();
    },
  };
}

/**
 * --s3: content in an object store, an s3rver of our own (in this process; test/support/s3.ts) with
 * a bucket named after the database.
 */
function s3Part(): Part {
  let s3: TestS3 | null = null;
  return {
    name: 's3rver',
    async start(run) {
      s3 = await startS3rver();
      const bucket = bucketFor(run.db!.name);
      await createBucket(s3.endpoint, bucket);
      return s3Env(s3.endpoint, bucket);
    },
    async stop() {
      await s3?.close();
    },
  };
}

/** Switches beyond the database part (which --replica chooses). */
export const SWITCHES: Record<string, () => Part> = {
  s3: s3Part,
  engines: enginesPart,
};
