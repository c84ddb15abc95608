/**
 * Several Meilisearch engines for a test (or, with TEST_MEILI_ENGINES=n, for a whole run): the
 * repo's embedded engine, started n times on free ports in a directory of their own, with one
 * master key for all (as MEILI_URLS expects). No automatic restart: a test kills and revives them.
 * stop() stops every engine it started and removes the directory.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedMeili } from '../../src/search/embedded/embedded';

export class TestEngines {
  private constructor(
    readonly dir: string,
    readonly key: string,
    readonly engines: EmbeddedMeili[],
  ) {}

  /** Starts `n` engines (all of them, or none: a failure stops those already started). */
  static async start(n: number): Promise<TestEngines> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'session-archive-engines-'));
    const key = crypto.randomBytes(24).toString('base64url');
    const engines: EmbeddedMeili[] = [];
    const set = new TestEngines(dir, key, engines);
    try {
      for (let i = 0; i < n; i++) {
        const name = `engine-${i}`;
        fs.mkdirSync(path.join(dir, name), { recursive: true });
        fs.writeFileSync(path.join(dir, name, 'master-key'), key, { mode: 0o600 });
        const e = new EmbeddedMeili({ dataDir: dir, name, autoRestart: false });
        engines.push(e);
        await e.start();
      }
    } catch (err) {
      await set.stop();
      throw err;
    }
    return set;
  }

  urls(from = 0, to = this.engines.length): string[] {
    return this.engines.slice(from, to).map((e) => e.url!);
  }

  /** Kills engine `i` (SIGKILL: a crash). */
  kill(i: number): void {
    this.engines[i].kill('SIGKILL');
  }

  /** Starts engine `i` again on its former port (its URL stays). */
  async revive(i: number): Promise<void> {
    const before = this.engines[i].url;
    await this.engines[i].ensure();
    if (this.engines[i].url !== before) throw new Error(`engine ${i} came back on ${this.engines[i].url}, not ${before}`);
  }

  async stop(): Promise<void> {
    for (const e of this.engines) await e.stop().catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
