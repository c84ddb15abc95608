/**
 * Child processes a test starts (scratch servers, engines they start, CPU burners) run in a
 * process group of their own and are recorded in a directory of this jest run; the global
 * teardown kills whatever is still recorded, so a test that fails or times out before its
 * afterAll leaves nothing running (the group takes grandchildren, e.g. a server's embedded
 * Meilisearch, with it).
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function trackedDir(): string {
  // SA_TEST_RUN_ID is set by the global setup: one directory per jest run, never another run's.
  return path.join(os.tmpdir(), `sa-test-procs-${process.env.SA_TEST_RUN_ID ?? process.pid}`);
}

export function spawnTracked(command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
  const proc = spawn(command, args, { ...options, detached: true });
  if (proc.pid) {
    fs.mkdirSync(trackedDir(), { recursive: true });
    const file = path.join(trackedDir(), String(proc.pid));
    fs.writeFileSync(file, command);
    proc.once('exit', () => {
      // The group may outlive its leader (grandchildren): kill it before forgetting it.
      killGroup(proc.pid!);
      forget(file);
    });
  }
  return proc;
}

export function killGroup(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* gone already */
  }
}

const dirRecord = (dir: string) => path.join(trackedDir(), `${Buffer.from(dir).toString('base64url')}.dir`);

/** A temp directory of this run (a scratch server's files): the global teardown removes it if its owner could not. */
export function trackDir(dir: string): void {
  fs.mkdirSync(trackedDir(), { recursive: true });
  fs.writeFileSync(dirRecord(dir), dir);
}

export function untrackDir(dir: string): void {
  forget(dirRecord(dir));
}

/**
 * Drops one record. Outside jest (a bench using the test harness) no global teardown runs, so the
 * run's directory goes with its last record instead of staying behind empty.
 */
function forget(record: string): void {
  fs.rmSync(record, { force: true });
  if (process.env.SA_TEST_RUN_ID) return;
  try {
    fs.rmdirSync(trackedDir());
  } catch {
    /* not empty, or gone already */
  }
}

/** Global teardown: every group still recorded for this run, then every directory recorded. */
export function killAllTracked(): void {
  const dir = trackedDir();
  if (!fs.existsSync(dir)) return;
  const dirs: string[] = [];
  for (const f of fs.readdirSync(dir)) {
    if (f.endsWith('.dir')) {
      dirs.push(fs.readFileSync(path.join(dir, f), 'utf8'));
      continue;
    }
    const pid = Number(f);
    if (Number.isInteger(pid) && pid > 0) {
      killGroup(pid, 'SIGCONT');
      killGroup(pid);
    }
  }
  for (const d of dirs) if (d.startsWith(os.tmpdir())) fs.rmSync(d, { recursive: true, force: true });
  fs.rmSync(dir, { recursive: true, force: true });
}
