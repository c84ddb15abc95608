/** The Meilisearch shared by a test run (started in global setup, stopped in global teardown). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedMeili } from '../../src/search/embedded/embedded';
import { TestEngines } from './meili-engines';

/**
 * DATA_DIR of the shared engine; test apps started with this DATA_DIR use the same engine. One per
 * run (global setup makes it and names it in the environment the workers inherit; global
 * teardown removes it), so that runs side by side never share one and none is left behind.
 */
export function testDataDir(): string {
  return (process.env.SA_TEST_DATA_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), 'session-archive-test-')));
}

const KEY = '__sessionArchiveTestMeili';

const ENGINES_KEY = '__sessionArchiveTestEngines';

/**
 * The test matrix's engines switch: TEST_MEILI_ENGINES=n (n ≥ 2) runs every search under n engines
 * (MEILI_URLS), each owning scope on one of them, instead of one.
 */
export function testEngineCount(): number {
  const n = Number(process.env.TEST_MEILI_ENGINES ?? '1');
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

/** The search settings of test apps and harnesses: the run's engines (MEILI_URLS with the matrix switch, else MEILI_URL). */
export function testMeiliEnv(): Record<string, string> {
  if (process.env.MEILI_URLS) return { MEILI_URL: '', MEILI_URLS: process.env.MEILI_URLS, MEILI_MASTER_KEY: process.env.MEILI_MASTER_KEY ?? '' };
  return { MEILI_URL: process.env.MEILI_URL ?? '', MEILI_MASTER_KEY: process.env.MEILI_MASTER_KEY ?? '' };
}

export async function startTestMeili(): Promise<void> {
  if (process.env.MEILI_URL || process.env.MEILI_URLS) return; // a server was given: use it
  if (testEngineCount() > 1) {
    const set = await TestEngines.start(testEngineCount());
    (globalThis as any)[ENGINES_KEY] = set;
    process.env.MEILI_URLS = set.urls().join(',');
    process.env.MEILI_MASTER_KEY = set.key;
    return;
  }
  const engine = new EmbeddedMeili({ dataDir: testDataDir() });
  await engine.start();
  (globalThis as any)[KEY] = engine;
  process.env.MEILI_URL = engine.url!;
  process.env.MEILI_MASTER_KEY = engine.masterKey;
}

export async function stopTestMeili(): Promise<void> {
  const engine: EmbeddedMeili | undefined = (globalThis as any)[KEY];
  if (engine) await engine.stop();
  const set: TestEngines | undefined = (globalThis as any)[ENGINES_KEY];
  if (set) await set.stop();
  const dir = process.env.SA_TEST_DATA_DIR;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}
