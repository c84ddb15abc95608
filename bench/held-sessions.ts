/**
 * What a search pays to learn which of the user's sessions the recent index holds with a copy in
 * the main index (src/search/engine/held-sessions.ts), read before every search that has any: on
 * a throwaway engine with the recent index's declared settings, a user holds whole sessions and
 * a large one (a document per fragment) with a main copy, beside 2,000 new sessions of theirs
 * (marked noMainCopy) and 2,000 of another user. Timed: the service's read, and reading every
 * unmarked document (the read before large sessions were asked collapsed), each with the
 * service's `limit: 1` read of whether the user holds anything at all beside it.
 *
 * With `--dims=N` the index has an embedder of N dimensions (as with an embeddings endpoint) and
 * every document a vector.
 *
 *   npx tsx bench/held-sessions.ts [--rounds=300] [--dims=384]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Meilisearch } from 'meilisearch';
import { EmbeddedMeili } from '../src/search/embedded/embedded';
import { MeiliConnection } from '../src/search/engine/connection';
import { heldSessions } from '../src/search/engine/held-sessions';
import { createNodeHttpClient } from '../src/search/engine/http-client';
import { indexSettingsFor, recentUidOf } from '../src/search/engine/index-settings';
import { scopeFilter } from '../src/search/engine/filter';
import { createLogger } from '../src/logger';
import { EMBEDDER } from '../src/domain/search-documents';
import { arg, percentile } from './support';

const ROUNDS = Number(arg('rounds') ?? 300);
const DIMS = Number(arg('dims') ?? 0);
const WARM_UP = 30;
const log = (s: string) => process.stdout.write(`${s}\n`);
/** Fragments of the large session, whole sessions with a main copy. */
const CASES: Array<[number, number]> = [
  [0, 0],
  [0, 5],
  [0, 300],
  [0, 3000],
  [1300, 5],
  [5000, 30],
];

const text = (n: number) => Array.from({ length: 200 }, (_, j) => `word${(n * 7 + j) % 5000}`).join(' ');
const doc = (id: string, userId: string, sessionDigest: string, whole: boolean, n: number, noMainCopy = false) => ({
  id,
  userId,
  sessionDigest,
  whole,
  content: text(n),
  ...(noMainCopy ? { noMainCopy: true } : {}),
  ...(DIMS ? { _vectors: { [EMBEDDER]: Array.from({ length: DIMS }, (_, i) => Math.sin(n + i)) } } : {}),
});

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-held-sessions-'));
  const engine = new EmbeddedMeili({ dataDir });
  const httpClient = createNodeHttpClient();
  try {
    await engine.start();
    const client = new Meilisearch({ host: engine.url!, apiKey: engine.masterKey, httpClient });
    const conn = new MeiliConnection({ embedded: engine }, createLogger('silent'));
    const uid = recentUidOf(DIMS ? `bench_e${DIMS}` : 'bench');
    const owned = scopeFilter(['u1']);
    const everyUnmarked = async () => {
      const any = client.index(uid).getDocuments({ filter: owned, fields: ['sessionDigest'], limit: 1 });
      const page = await client.index(uid).getDocuments<{ sessionDigest: string }>({
        filter: `(${owned}) AND NOT noMainCopy = true`,
        fields: ['sessionDigest'],
        limit: 10_000,
      });
      await any;
      return new Set(page.results.map((d) => d.sessionDigest)).size;
    };
    const collapsed = async () => (await heldSessions(conn, uid, ['u1'])).shadowing.length;
    log(`held sessions: the read before each search, ${ROUNDS} rounds, p50 / p95 ms${DIMS ? `, vectors of ${DIMS} dimensions` : ''}`);
    log(`  ${'large-session fragments, whole sessions'.padEnd(42)} ${'every unmarked document'.padEnd(26)} the service (collapsed)`);
    for (const [fragments, whole] of CASES) {
      await client.deleteIndex(uid).waitTask();
      await client.createIndex(uid, { primaryKey: 'id' }).waitTask();
      await client.index(uid).updateSettings(indexSettingsFor(uid)).waitTask({ timeout: 120_000 });
      const docs = [
        ...Array.from({ length: fragments }, (_, i) => doc(`L_${i}`, 'u1', 'L', false, i)),
        ...Array.from({ length: whole }, (_, i) => doc(`S_${i}`, 'u1', `S${i}`, true, i)),
        ...Array.from({ length: 2000 }, (_, i) => doc(`N_${i}`, 'u1', `N${i}`, true, i, true)),
        ...Array.from({ length: 2000 }, (_, i) => doc(`O_${i}`, 'u2', `O${i}`, true, i)),
      ];
      await client.index(uid).addDocuments(docs).waitTask({ timeout: 300_000 });
      const expected = whole + (fragments ? 1 : 0);
      const time = async (read: () => Promise<number>) => {
        const times: number[] = [];
        for (let i = 0; i < ROUNDS + WARM_UP; i++) {
          const t = performance.now();
          const n = await read();
          if (i >= WARM_UP) times.push(performance.now() - t);
          if (n !== expected) throw new Error(`read ${n} sessions, expected ${expected}`);
        }
        return `${percentile(times, 50).toFixed(2)} / ${percentile(times, 95).toFixed(2)}`;
      };
      log(`  ${`${fragments}, ${whole}`.padEnd(42)} ${(await time(everyUnmarked)).padEnd(26)} ${await time(collapsed)}`);
    }
    conn.close();
  } finally {
    httpClient.destroy();
    await engine.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
