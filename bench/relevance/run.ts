/**
 * The relevance bench: the fixture's sessions written through the session service to a fresh
 * database and a real engine (an embedded Meilisearch of its own, or MEILI_URL's), then every
 * question asked through searchSessions, scored per kind.
 *
 *   npm run bench -- --only=relevance
 *   npx tsx bench/relevance/run.ts [--misses]    # --misses: list the questions not in the top 3
 *
 * Ends with one line: `relevance: recall@3 <x> MRR <y>`. The committed figure is baseline.json.
 */
import fs from 'node:fs';
import { startSearchHarness } from '../../test/support/meili-harness';
import { evaluate, misses, report } from './evaluate';
import { loadFixture } from './load';

async function main() {
  const started = Date.now();
  const h = await startSearchHarness();
  try {
    const run = await loadFixture(h);
    const e = await evaluate(run.find);
    console.log(
      `\n## Relevance (bench/relevance: ${run.sessions} sessions, ${e.overall.questions} questions) [${Math.round((Date.now() - started) / 1000)} s]`,
    );
    for (const line of report(e)) console.log(line);
    if (process.argv.includes('--misses')) {
      console.log('\nnot in the top 3:');
      for (const line of misses(e)) console.log(line);
    }
    console.log(`relevance: recall@3 ${e.overall.recallAt3.toFixed(3)} MRR ${e.overall.mrr.toFixed(3)}`);
    if (process.argv.includes('--json')) console.log(JSON.stringify({ overall: e.overall, byKind: e.byKind }, null, 2));
  } finally {
    await h.close();
    const dir = process.env.SA_TEST_DATA_DIR;
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
