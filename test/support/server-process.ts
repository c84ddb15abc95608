/**
 * The real server (`tsx src/main.ts`) as a child process of a test, in a process group of its own
 * (support/processes.ts: the global teardown ends it if the test cannot). For tests that need
 * what only a real process shows: its own module state (several instances on one database), its
 * signal handling, its handling of unhandled rejections.
 */
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { rawRequest, type TestResponse } from './app';
import { killGroup, spawnTracked } from './processes';
import { ROOT } from './paths';

/** The JWT_SECRET servers started here use (keys made for them are signed with it). */
export const JWT_SECRET = 'server-process-test-secret-long-enough';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** The real server (`tsx src/main.ts`) as a child process. */
export class ServerProcess {
  output = '';
  readonly exited: Promise<number | null>;
  private constructor(
    readonly proc: ChildProcess,
    readonly url: string,
  ) {
    proc.stdout!.on('data', (d) => (this.output += d));
    proc.stderr!.on('data', (d) => (this.output += d));
    this.exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
  }

  /**
   * A free port can be taken between the probe and the server's listen (by any connection's
   * ephemeral local port): a start that loses that race is tried again on another port.
   */
  static async start(databaseUrl: string, dataDir: string, extraEnv: Record<string, string> = {}): Promise<ServerProcess> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await ServerProcess.startOnce(databaseUrl, dataDir, extraEnv);
      } catch (err) {
        if (attempt >= 3 || !String((err as Error).message).includes('EADDRINUSE')) throw err;
      }
    }
  }

  private static async startOnce(databaseUrl: string, dataDir: string, extraEnv: Record<string, string>): Promise<ServerProcess> {
    const port = await freePort();
    // One process (tsx as a loader, not its CLI wrapper): the signal reaches main.ts itself.
    const proc = spawnTracked(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        // As in production: NODE_ENV=test would switch off libraries' own signal handlers.
        NODE_ENV: 'development',
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        JWT_SECRET,
        WORKERS_ENABLED: 'false',
        MEILI_URL: '',
        REDIS_URL: '',
        LOG_LEVEL: 'warn',
        ...extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new ServerProcess(proc, `http://127.0.0.1:${port}`);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`server exited early:\n${server.output}`);
      const r = await rawRequest(server.url, 'GET', '/healthz').catch(() => null);
      if (r?.status === 200) return server;
      if (Date.now() > deadline) throw new Error(`server did not start:\n${server.output}`);
      await sleep(200);
    }
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  request(method: string, urlPath: string, opts?: Parameters<typeof rawRequest>[3]): Promise<TestResponse> {
    return rawRequest(this.url, method, urlPath, opts);
  }

  async stop(): Promise<void> {
    if (!this.alive) return killGroup(this.proc.pid!);
    this.proc.kill('SIGTERM');
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 10_000).unref())]);
    // The whole group: an embedded engine the server started goes with it.
    killGroup(this.proc.pid!);
  }
}
