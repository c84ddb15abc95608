/**
 * Two private MariaDB servers for read-replica tests: a primary (binary log, GTIDs) and a replica
 * of it (GTID replication, `read_only`), each with its own data directory under a temp dir, port
 * and socket. Both run in process groups recorded for this jest run and their directory is
 * recorded too (support/processes.ts), so a test that dies before its cleanup leaves nothing behind.
 *
 * The application user `sa_app` has every privilege on the test databases (`sa\_%`) and none
 * beyond them: on the replica, `read_only` refuses its writes (root, with SUPER, could still write).
 */
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as mariadb from 'mariadb';
import { testConnection } from './connection';
import { killGroup, spawnTracked, trackDir, untrackDir } from './processes';

const run = promisify(execFile);

/** (Not server-process.ts's: this module is also loaded by the global setup, outside jest's module mapping.) */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const APP_USER = 'sa_app';
export const APP_PASSWORD = 'sa-app-password';
const REPL_USER = 'sa_repl';
const REPL_PASSWORD = 'sa-repl-password';

/** Small and fast: a throwaway server for tests, not a durable one. */
const SERVER_ARGS = [
  '--innodb-buffer-pool-size=32M',
  '--innodb-log-file-size=8M',
  '--innodb-flush-log-at-trx-commit=0',
  '--sync-binlog=0',
  '--skip-name-resolve',
  '--max-connections=300',
  '--performance-schema=OFF',
  '--character-set-server=utf8mb4',
  '--collation-server=utf8mb4_unicode_ci',
];

export interface TestMariadb {
  readonly port: number;
  /** mysql://root@127.0.0.1:port (no database). */
  readonly rootUrl: string;
  /** mysql://sa_app:…@127.0.0.1:port (no database). */
  readonly appUrl: string;
  readonly running: boolean;
  root<T>(fn: (conn: mariadb.Connection) => Promise<T>): Promise<T>;
  /** SIGKILL: the process is gone at once, as after a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
}

export interface MariadbPair {
  primary: TestMariadb;
  replica: TestMariadb;
  /** Resolves once the replica has applied everything the primary has written so far. */
  synced(timeoutS?: number): Promise<void>;
  stopReplicaSql(): Promise<void>;
  startReplicaSql(): Promise<void>;
  close(): Promise<void>;
}

/** A root connection to the server on `port` (support/connection.ts). */
function connect(port: number): Promise<mariadb.Connection> {
  return testConnection({ host: '127.0.0.1', port, user: 'root', bigIntAsNumber: true });
}

function server(name: string, dir: string, port: number, extra: string[]): TestMariadb {
  const datadir = path.join(dir, name);
  let proc: ChildProcess | null = null;
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const self: TestMariadb = {
    port,
    rootUrl: `mysql://root@127.0.0.1:${port}`,
    appUrl: `mysql://${APP_USER}:${APP_PASSWORD}@127.0.0.1:${port}`,
    get running() {
      return proc !== null && proc.exitCode === null && proc.signalCode === null;
    },
    async root(fn) {
      const conn = await connect(port);
      try {
        return await fn(conn);
      } finally {
        await conn.end().catch(() => undefined);
      }
    },
    async kill() {
      if (!proc) return;
      const p = proc;
      proc = null;
      const exited = new Promise((r) => (p.exitCode !== null || p.signalCode !== null ? r(null) : p.once('exit', r)));
      killGroup(p.pid!);
      await exited;
    },
    async start() {
      let output = '';
      const p = spawnTracked(
        'mariadbd',
        [
          '--no-defaults',
          ...(asRoot ? ['--user=root'] : []),
          `--datadir=${datadir}`,
          `--socket=${path.join(dir, `${name}.sock`)}`,
          `--pid-file=${path.join(dir, `${name}.pid`)}`,
          `--port=${port}`,
          '--bind-address=127.0.0.1',
          ...SERVER_ARGS,
          ...extra,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      p.stdout!.on('data', (d) => (output += d));
      p.stderr!.on('data', (d) => (output += d));
      proc = p;
      const deadline = Date.now() + 60_000;
      for (;;) {
        if (p.exitCode !== null || p.signalCode !== null) throw new Error(`mariadbd ${name} exited early:\n${output.slice(-4000)}`);
        // Polled while the server starts: a short connect timeout, tried again every 100 ms.
        const conn = await mariadb.createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 2000 }).catch(() => null);
        if (conn) {
          await conn.end();
          return;
        }
        if (Date.now() > deadline) throw new Error(`mariadbd ${name} did not start:\n${output.slice(-4000)}`);
        await sleep(100);
      }
    },
  };
  return self;
}

/** Starts a primary and a replica of it; `close()` stops both and removes their files. */
export async function startMariadbPair(): Promise<MariadbPair> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-mariadb-pair-'));
  trackDir(dir);
  let primary: TestMariadb | null = null;
  let replica: TestMariadb | null = null;
  const close = async () => {
    await replica?.kill().catch(() => undefined);
    await primary?.kill().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
    untrackDir(dir);
  };
  try {
    await run('mariadb-install-db', [
      '--no-defaults',
      `--datadir=${path.join(dir, 'primary')}`,
      ...(typeof process.getuid === 'function' && process.getuid() === 0 ? ['--user=root'] : []),
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      '--innodb-log-file-size=8M',
      '--innodb-buffer-pool-size=32M',
      '--innodb-flush-log-at-trx-commit=0',
    ]);
    // Both start from the same files: the replica then needs only what the primary logs from here on.
    fs.cpSync(path.join(dir, 'primary'), path.join(dir, 'replica'), { recursive: true });
    primary = server('primary', dir, await freePort(), ['--server-id=1', '--log-bin=primary-bin', '--binlog-format=ROW']);
    await primary.start();
    replica = server('replica', dir, await freePort(), ['--server-id=2', '--read-only=ON', '--relay-log=replica-relay']);
    await replica.start();
    await primary.root(async (c) => {
      await c.query(`CREATE USER '${REPL_USER}'@'127.0.0.1' IDENTIFIED BY '${REPL_PASSWORD}'`);
      await c.query(`GRANT REPLICATION SLAVE ON *.* TO '${REPL_USER}'@'127.0.0.1'`);
      await c.query(`CREATE USER '${APP_USER}'@'127.0.0.1' IDENTIFIED BY '${APP_PASSWORD}'`);
      await c.query(`GRANT ALL PRIVILEGES ON \`sa\\_%\`.* TO '${APP_USER}'@'127.0.0.1'`);
    });
    const primaryPort = primary.port;
    await replica.root(async (c) => {
      await c.query(
        `CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${primaryPort}, MASTER_USER='${REPL_USER}', MASTER_PASSWORD='${REPL_PASSWORD}', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1`,
      );
      await c.query('START SLAVE');
    });
  } catch (err) {
    await close();
    throw err;
  }
  const p = primary;
  const r = replica;
  return {
    primary: p,
    replica: r,
    async synced(timeoutS = 30) {
      const [{ pos }] = await p.root((c) => c.query<Array<{ pos: string }>>('SELECT @@global.gtid_binlog_pos AS pos'));
      const [{ w }] = await r.root((c) => c.query<Array<{ w: number | null }>>('SELECT MASTER_GTID_WAIT(?, ?) AS w', [pos, timeoutS]));
      if (w !== 0) throw new Error(`the replica did not reach ${pos} within ${timeoutS} s`);
    },
    stopReplicaSql: () => r.root(async (c) => void (await c.query('STOP SLAVE SQL_THREAD'))),
    startReplicaSql: () => r.root(async (c) => void (await c.query('START SLAVE SQL_THREAD'))),
    close,
  };
}
