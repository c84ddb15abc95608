/** The Meilisearch shared by a test run (started in global setup, stopped in global teardown). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedMeili } from '../../src/search/embedded/embedded';

/**
 * DATA_DIR of the shared engine; test apps started with this DATA_DIR use the same engine. One per
 * run (global setup makes it and names it in the environment the workers inherit; global
 * teardown removes it), so that runs side by side never share one and none is left behind.
 */
export function testDataDir(): string {
  return (process.env.SA_TEST_DATA_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), 'session-archive-test-')));
}

const KEY = '__sessionArchiveTestMeili';

export async function startTestMeili(): Promise<void> {
  if (process.env.MEILI_URL) return; // a server was given: use it
  const engine = new EmbeddedMeili({ dataDir: testDataDir() });
  await engine.start();
  (globalThis as any)[KEY] = engine;
  process.env.MEILI_URL = engine.url!;
  process.env.MEILI_MASTER_KEY = engine.masterKey;
}

export async function stopTestMeili(): Promise<void> {
  const engine: EmbeddedMeili | undefined = (globalThis as any)[KEY];
  if (engine) await engine.stop();
  const dir = process.env.SA_TEST_DATA_DIR;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}
