/**
 * The database watchdog (src/http/db-watchdog.ts) against the real MariaDB: a monitor stopped
 * while its first connection is still being made leaves no connection behind (one did, found as
 * a Jest worker that would not exit after a test whose app lived a few milliseconds); a server that
 * answers it has too many connections is busy, not unreachable.
 */
import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import * as mariadb from 'mariadb';
import { loadConfig } from '../../src/config';
import { connectionOptions } from '../../src/db/client';
import { DbMonitor } from '../../src/http/db-watchdog';
import { createLogger } from '../../src/logger';

const config = loadConfig({ DATABASE_URL: 'mysql://root@127.0.0.1:3306/mysql', JWT_SECRET: 'test-secret-that-is-long-enough', LOG_LEVEL: 'silent' });

/** This process's open sockets to MariaDB, by local port. */
const mariadbSockets = () =>
  new Set(
    (process as unknown as { _getActiveHandles(): any[] })
      ._getActiveHandles()
      .filter((h) => h?.constructor?.name === 'Socket' && h.remotePort === 3306 && !h.destroyed)
      .map((h) => `${h.localPort}`),
  );

const response = () => Object.assign(new EventEmitter(), { headersSent: false, writableEnded: false }) as unknown as Response;

async function until(cond: () => boolean, limitMs = 15_000): Promise<boolean> {
  for (const end = Date.now() + limitMs; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) if (cond()) return true;
  return cond();
}

/** A monitor on the real driver whose connections the test can see (`made`). */
function watchedMonitor() {
  const made: Array<Promise<mariadb.Connection>> = [];
  const watched = (opts: mariadb.ConnectionConfig) => {
    const p = mariadb.createConnection(opts);
    made.push(p);
    return p;
  };
  const monitor = new DbMonitor({ ...connectionOptions(config.databaseUrl), connectTimeout: 10_000 }, createLogger('silent'), watched);
  const cleanUp = () =>
    made.forEach(
      (p) =>
        void p.then(
          (c) => c.destroy(),
          () => undefined,
        ),
    );
  return { monitor, made, cleanUp };
}

test('stopped while connecting: the connection it was making is closed once made', async () => {
  const { monitor, made, cleanUp } = watchedMonitor();
  try {
    let passed = false;
    monitor.middleware()({ path: '/api/v1/projects' } as Request, response(), () => (passed = true));
    expect(passed).toBe(true);
    expect(made).toHaveLength(1); // the first request makes it connect
    monitor.stop(); // before the connection is made
    const conn = await made[0];
    expect(await until(() => !conn.isValid())).toBe(true);
  } finally {
    cleanUp();
  }
});

test('stopped after connecting: its connection is closed', async () => {
  const before = mariadbSockets();
  const { monitor, made, cleanUp } = watchedMonitor();
  try {
    monitor.middleware()({ path: '/api/v1/projects' } as Request, response(), () => undefined);
    const conn = await made[0];
    await new Promise((r) => setImmediate(r)); // the monitor has taken the connection
    expect(conn.isValid()).toBe(true);
    expect(monitor.reachable && [...mariadbSockets()].some((p) => !before.has(p))).toBe(true);
    monitor.stop();
    expect(await until(() => !conn.isValid())).toBe(true);
    expect(await until(() => [...mariadbSockets()].every((p) => before.has(p)))).toBe(true);
  } finally {
    cleanUp();
  }
});

test('a server that refuses a connection for having too many is reachable: requests go on, none is answered 503', async () => {
  // An account allowed one connection, holding it: the monitor's own connect is refused (1226).
  const user = `sa_wd_${crypto.randomBytes(4).toString('hex')}`;
  const admin = await mariadb.createConnection(connectionOptions(config.databaseUrl));
  // No database: the account is granted none (it only connects).
  const asUser = { ...connectionOptions(config.databaseUrl), user, password: 'pw', database: undefined };
  const made: Array<Promise<mariadb.Connection>> = [];
  let held: mariadb.Connection | null = null;
  const monitor = new DbMonitor({ ...connectionOptions(config.databaseUrl), user, password: 'pw', connectTimeout: 10_000 }, createLogger('silent'), (opts) => {
    const p = mariadb.createConnection(opts);
    made.push(p);
    return p;
  });
  try {
    await admin.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'pw' WITH MAX_USER_CONNECTIONS 1`);
    held = await mariadb.createConnection(asUser);
    let answered503 = false;
    const res = Object.assign(response(), {
      setHeader: () => undefined,
      status: (n: number) => {
        answered503 ||= n === 503;
        return { json: () => undefined, end: () => undefined };
      },
    }) as unknown as Response;
    let passed = false;
    monitor.middleware()(
      { method: 'GET', path: '/api/v1/projects', originalUrl: '/api/v1/projects', headers: {} } as unknown as Request,
      res,
      () => (passed = true),
    );
    expect(passed).toBe(true);
    const refusal = await made[0].then(
      () => null,
      (err: { errno?: number }) => err.errno,
    );
    expect(refusal).toBe(1226);
    await new Promise((r) => setImmediate(r));
    // Past the next ticks (each tries to connect again, and is refused again).
    expect(await until(() => made.length >= 3)).toBe(true);
    expect({ reachable: monitor.reachable, answered503 }).toEqual({ reachable: true, answered503: false });
  } finally {
    monitor.stop();
    made.forEach(
      (p) =>
        void p.then(
          (c) => c.destroy(),
          () => undefined,
        ),
    );
    await held?.end();
    await admin.query(`DROP USER IF EXISTS '${user}'@'%'`);
    await admin.end();
  }
});
