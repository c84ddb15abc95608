/**
 * Search when the engine goes away: writes keep working (they only write the outbox), searches
 * fail with SERVICE_UNAVAILABLE, and the pending work is applied once the engine is back. Also the
 * embedded engine's supervision: restart after a crash, one engine per DATA_DIR.
 * These tests run engines of their own (not the run's shared one), since they kill them.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../../src/errors';
import { EmbeddedMeili } from '../../src/search/embedded/embedded';
import { newSessionId, startSearchHarness, type SearchHarness } from '../support/meili-harness';
import { eventually } from '../support/eventually';
import { ROOT } from '../support/paths';

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const ids = (r: { results: Array<{ sessionId: string }> }) => r.results.map((x) => x.sessionId);
const tmpDataDir = (tag: string) => fs.mkdtempSync(path.join(os.tmpdir(), `sa-meili-${tag}-`));

describe('engine outage', () => {
  let dataDir: string;
  let engine: EmbeddedMeili;
  let h: SearchHarness;

  beforeAll(async () => {
    dataDir = tmpDataDir('outage');
    // Not supervised: the test decides when it comes back.
    engine = new EmbeddedMeili({ dataDir, autoRestart: false });
    await engine.start();
    h = await startSearchHarness({ env: { MEILI_URL: engine.url!, MEILI_MASTER_KEY: engine.masterKey } });
  }, 120_000);

  afterAll(async () => {
    await h?.close();
    await engine?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('writes succeed while it is down, search is unavailable, pending work is applied when it is back', async () => {
    const alice = await h.user();
    const kept = newSessionId();
    const doomed = newSessionId();
    await h.put(alice, 'outage', kept, { markdown: '# kept\n\nsteadyword' });
    await h.put(alice, 'outage', doomed, { markdown: '# doomed\n\nbeforeword' });
    await h.settle();
    expect(ids(await h.find(alice, 'beforeword'))).toEqual([doomed]);

    const url = engine.url;
    const pid = engine.pid!;
    engine.kill('SIGKILL');
    await eventually('the engine process to exit', () => !isAlive(pid));

    // Writes only touch the database.
    const added = newSessionId();
    await h.put(alice, 'outage', added, { markdown: '# added\n\noutageword' });
    await h.put(alice, 'outage', kept, { markdown: '# kept\n\nsteadyword updatedword' });
    await h.remove(alice, 'outage', doomed);

    const failed = h.find(alice, 'steadyword');
    await expect(failed).rejects.toBeInstanceOf(AppError);
    await expect(failed).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'Service temporarily unavailable' });
    // The failed search (or the worker's failed writes) set off a probe of both engines; the
    // verdict is the probe's, so it comes a moment later.
    await eventually('the engine to be reported down', () => !h.search.isHealthy());
    expect(h.search.isHealthy()).toBe(false);
    expect(await h.search.backlog()).toBeGreaterThanOrEqual(3);

    // Back, on the same address and data.
    await engine.ensure();
    expect(engine.url).toBe(url);
    expect(engine.pid).not.toBe(pid);
    await h.eventually(
      'work recorded during the outage to be applied',
      async () => {
        try {
          return ids(await h.find(alice, 'outageword')).includes(added);
        } catch (err) {
          if (err instanceof AppError && err.code === 'SERVICE_UNAVAILABLE') return false;
          throw err;
        }
      },
      30_000,
    );
    await h.settle();
    expect(ids(await h.find(alice, 'updatedword'))).toEqual([kept]);
    expect(await h.find(alice, 'beforeword')).toEqual({ total: 0, results: [] });
    expect(h.search.isHealthy()).toBe(true);
  }, 120_000);
});

describe('embedded engine', () => {
  test('the service runs its own engines (main and recent index) and restarts one when it dies', async () => {
    const dataDir = tmpDataDir('supervised');
    const h = await startSearchHarness({ env: { MEILI_URL: '', MEILI_MASTER_KEY: '', DATA_DIR: dataDir, SEARCH_INDEXING_THREADS: '2' } });
    try {
      const embedded = h.search.embedded!;
      expect(embedded).not.toBeNull();
      expect(embedded.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(fs.statSync(path.join(dataDir, 'meilisearch', 'master-key')).mode & 0o077).toBe(0);
      // The recent index has an engine of its own: its small batches never wait behind the main index's.
      const recent = h.search.recentEmbedded!;
      expect(recent.home).toBe(path.join(dataDir, 'meilisearch-recent'));
      expect(recent.pid).not.toBe(embedded.pid);
      expect(recent.url).not.toBe(embedded.url);
      // SEARCH_INDEXING_THREADS reaches the main index's engine; the recent one keeps the engine's default.
      const argv = (pid: number) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      expect(argv(embedded.pid!).join(' ')).toContain('--max-indexing-threads 2');
      expect(argv(recent.pid!)).not.toContain('--max-indexing-threads');

      const alice = await h.user();
      await h.put(alice, 'sup', newSessionId(), { markdown: 'firstlifeword' });
      await h.settle();
      expect((await h.find(alice, 'firstlifeword')).results).toHaveLength(1);

      /** Kills `engine`, waits for its successor, and checks that a new write is found. */
      const crashAndRecover = async (engine: EmbeddedMeili, word: string) => {
        const pid = engine.pid!;
        engine.kill('SIGKILL');
        await eventually('a new engine process', () => engine.pid !== pid && engine.pid !== null && isAlive(engine.pid), 30_000);
        const id = newSessionId();
        await h.put(alice, 'sup', id, { markdown: word });
        await eventually(
          'search to work again with new content',
          async () => {
            try {
              return ids(await h.find(alice, word)).includes(id);
            } catch {
              return false;
            }
          },
          30_000,
        );
        return id;
      };
      const second = await crashAndRecover(embedded, 'secondlifeword');
      // The data survived the crash.
      expect((await h.find(alice, 'firstlifeword')).results).toHaveLength(1);
      // The recent index's engine too: what it held was written to disk, new writes reach it again.
      await crashAndRecover(recent, 'thirdlifeword');
      expect(ids(await h.find(alice, 'secondlifeword'))).toEqual([second]);

      const last = [embedded.pid!, recent.pid!];
      await h.close();
      for (const pid of last) expect(isAlive(pid)).toBe(false);
    } finally {
      await h.close().catch(() => undefined);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);

  test('processes with the same DATA_DIR share one engine; the last one to stop stops it', async () => {
    const dataDir = tmpDataDir('shared');
    const a = new EmbeddedMeili({ dataDir });
    const b = new EmbeddedMeili({ dataDir });
    try {
      await Promise.all([a.start(), b.start()]);
      expect(a.pid).not.toBeNull();
      expect(b.pid).toBe(a.pid);
      expect(b.url).toBe(a.url);
      const pid = a.pid!;

      await a.stop();
      expect(isAlive(pid)).toBe(true);
      await b.stop();
      await eventually('the engine to stop', () => !isAlive(pid), 10_000);
    } finally {
      await a.stop().catch(() => undefined);
      await b.stop().catch(() => undefined);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  test('stop() stops the engine it spawned also when its data directory was deleted first', async () => {
    const dataDir = tmpDataDir('stop-gone');
    const e = new EmbeddedMeili({ dataDir });
    let pid = 0;
    try {
      await e.start();
      pid = e.pid!;
      expect(isAlive(pid)).toBe(true);
      fs.rmSync(dataDir, { recursive: true, force: true });
      await e.stop();
      await eventually('the engine to stop', () => !isAlive(pid), 10_000);
    } finally {
      if (pid && isAlive(pid)) process.kill(pid, 'SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  // A process that starts the engine, prints its pid, runs `before` and exits at once (no stop()):
  // what the shutdown backstop or an uncaught error does.
  const exitsWithoutStop = async (name: string, before: string) => {
    const dataDir = tmpDataDir(name);
    const script = [
      `import fs from 'node:fs';`,
      `import { EmbeddedMeili } from ${JSON.stringify(path.resolve(ROOT, 'src/search/embedded/embedded'))};`,
      `const dataDir = ${JSON.stringify(dataDir)};`,
      `const e = new EmbeddedMeili({ dataDir });`,
      `await e.start();`,
      `process.stdout.write(String(e.pid));`,
      before,
      `process.exit(0);`,
    ].join('\n');
    const file = path.join(os.tmpdir(), `sa-exits-${process.pid}-${name}.mts`);
    fs.writeFileSync(file, script);
    let pid = 0;
    try {
      const out = await new Promise<string>((resolve, reject) =>
        execFile(path.resolve(ROOT, 'node_modules/.bin/tsx'), [file], { timeout: 90_000 }, (err, stdout) =>
          err ? reject(new Error(err.message)) : resolve(stdout),
        ),
      );
      pid = Number(out.trim());
      expect(pid).toBeGreaterThan(0);
      await eventually('the engine to stop', () => !isAlive(pid), 15_000);
      expect(fs.existsSync(path.join(dataDir, 'meilisearch', 'engine.json'))).toBe(false);
    } finally {
      if (pid && isAlive(pid)) process.kill(pid, 'SIGKILL');
      fs.rmSync(file, { force: true });
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  };

  test('a process that exits without stopping its engine takes the engine with it', () => exitsWithoutStop('exit', ''), 120_000);

  test(
    'it does so also when its data directory was deleted first',
    () => exitsWithoutStop('exit-gone', 'fs.rmSync(dataDir, { recursive: true, force: true });'),
    120_000,
  );
});
