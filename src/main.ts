// First: refuse an unsupported Node.js before anything else is loaded or touched.
import './check-node.cjs';
import http from 'node:http';
import { buildApp } from './app';
import { ConfigError, loadConfig } from './config';
import { useUtcClock } from './db/client';
import { migrate } from './db/migrate';
import { createDeps } from './deps';
import { createRateLimitHooks } from './http/rate-limit';
import { databaseRefusal } from './data/errors';
import { createLogger } from './logger';
import { tuneHeap } from './http/fast/heap';
import { processMetrics } from './metrics';

/** start: config → migrations → app → listen; SIGTERM drains in-flight requests, then exits 0. */
async function main(): Promise<void> {
  useUtcClock();
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  if (config.fastPaths) tuneHeap();
  const logger = createLogger(config.logLevel);
  // The mariadb driver leaves a rejected promise unhandled when the server goes away while a new
  // connection is being set up; the pool recovers on its own, so such errors must not end the
  // process. Anything else unhandled still does.
  process.on('unhandledRejection', (err) => {
    if (databaseRefusal(err)) {
      logger.warn({ msg: 'database connection lost', err: err instanceof Error ? err.message : String(err) });
      return;
    }
    logger.fatal({ msg: 'unhandled rejection', err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) });
    process.exit(1);
  });
  await migrate(config.databaseUrl, (msg) => logger.info({ msg }));
  const deps = createDeps(config, logger, { warmReads: true });
  await deps.start();
  const rateLimit = createRateLimitHooks(config, logger);
  // Shared budgets are counted in Redis from the first request on (not per instance meanwhile).
  await rateLimit.ready();
  // The process's own metrics, once for the process (metrics.ts processMetrics).
  const built = await buildApp(deps, rateLimit, { metrics: config.metricsEnabled ? processMetrics() : undefined });
  const server = http.createServer(built.app);
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 10 * 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  logger.info({ msg: `Session Archive listening on http://${config.host}:${config.port}` });
  // For a person who just ran `npm start`: the console's address (stderr, beside the JSON logs).
  const shownHost = ['0.0.0.0', '::', ''].includes(config.host) ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  process.stderr.write(`\nSession Archive is running. Open http://${shownHost}:${config.port}/ in your browser.\n\n`);

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ msg: `${signal}: draining in-flight requests` });
    server.close(() => {
      void (async () => {
        await built.stop().catch(() => undefined);
        await rateLimit.close();
        await deps.close();
        logger.info({ msg: 'stopped' });
        process.exit(0);
      })();
    });
    // Idle keep-alive sockets would hold close() open; in-flight requests finish first, for at
    // most SHUTDOWN_GRACE_S: then what remains (a client trickling its body) is closed.
    server.closeIdleConnections();
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    idle.unref();
    setTimeout(() => {
      logger.warn({ msg: `shutdown grace of ${config.shutdownGraceS} s over: closing remaining connections` });
      server.closeAllConnections();
      // Backstop: work still running after its connection went is not waited for much longer.
      setTimeout(() => process.exit(0), 10_000).unref();
    }, config.shutdownGraceS * 1000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(`fatal: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
