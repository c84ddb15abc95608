/**
 * The database watchdog (src/http/db-watchdog.ts) against the real MariaDB: a monitor stopped
 * while its first connection is still being made leaves no connection behind (one did, found as
 * a Jest worker that would not exit after a test whose app lived a few milliseconds).
 */
import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import * as mariadb from 'mariadb';
import { loadConfig } from '../src/config';
import { connectionOptions } from '../src/db/client';
import { DbMonitor, dbWatchdog } from '../src/http/db-watchdog';
import { createLogger } from '../src/logger';

const config = loadConfig({ DATABASE_URL: 'mysql://root@127.0.0.1:3306/mysql', JWT_SECRET: 'test-secret-that-is-long-enough', LOG_LEVEL: 'silent' });

/** This process's open sockets to MariaDB, by local port. */
const mariadbSockets = () =>
  new Set(
    ((process as unknown as { _getActiveHandles(): any[] })._getActiveHandles())
      .filter((h) => h?.constructor?.name === 'Socket' && h.remotePort === 3306 && !h.destroyed)
      .map((h) => `${h.localPort}`),
  );

const response = () => Object.assign(new EventEmitter(), { headersSent: false, writableEnded: false }) as unknown as Response;

async function until(cond: () => boolean, limitMs = 15_000): Promise<boolean> {
  for (const end = Date.now() + limitMs; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) if (cond()) return true;
  return cond();
}

test('stopped while connecting: the connection it was making is closed once made', async () => {
  // The real driver, watched: which connections the monitor makes.
  const made: Array<Promise<mariadb.Connection>> = [];
  const watched = (opts: mariadb.ConnectionConfig) => {
    const p = mariadb.createConnection(opts);
    made.push(p);
    return p;
  };
  try {
    const monitor = new DbMonitor({ ...connectionOptions(config.databaseUrl), connectTimeout: 10_000 }, createLogger('silent'), watched);
    let passed = false;
    monitor.middleware()({ path: '/api/v1/projects' } as Request, response(), () => (passed = true));
    expect(passed).toBe(true);
    expect(made).toHaveLength(1); // the first request makes it connect
    monitor.stop(); // before the connection is made
    const conn = await made[0];
    expect(await until(() => !conn.isValid())).toBe(true);
  } finally {
    for (const p of made) void p.then((c) => c.destroy(), () => undefined);
  }
});

test('stopped after connecting: its connection is closed', async () => {
  const before = mariadbSockets();
  const monitor = dbWatchdog(config, createLogger('silent'));
  monitor.middleware()({ path: '/api/v1/projects' } as Request, response(), () => undefined);
  expect(await until(() => monitor.reachable && [...mariadbSockets()].some((p) => !before.has(p)))).toBe(true);
  await new Promise((r) => setTimeout(r, 600)); // a few ticks: connected and pinged
  monitor.stop();
  expect(await until(() => [...mariadbSockets()].every((p) => before.has(p)))).toBe(true);
});
