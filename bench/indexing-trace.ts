/**
 * Where an engine's indexing time went: the engine's own trace of every document batch it
 * applied (the `progressTrace` of its batches), summed per step.
 *
 *   npx tsx bench/indexing-trace.ts --data-dir=/tmp/sa-bench-xxx [--engine=meilisearch-anchor]
 *
 * Reads a data dir kept by `bench/search.ts --keep` (the engine is started on it and stopped
 * after): the main engine by default (`meilisearch`), or another of its engines by name. Prints
 * the number of batches, their documents and time, then the steps of the indexing phase with
 * their total time, longest first. Batches are the engine's: pushes queued while it works are
 * applied together, so their count says how often the per-batch costs (finalizing, post
 * processing) were paid.
 */
import { Meilisearch } from 'meilisearch';
import { EmbeddedMeili } from '../src/search/embedded/embedded';
import { createNodeHttpClient } from '../src/search/engine/http-client';
import { arg } from './support';
const dataDir = arg('data-dir');
if (!dataDir) throw new Error('--data-dir=DIR: a data dir kept by bench/search.ts --keep');

const UNITS: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, µs: 1e-6, ns: 1e-9 };
/** Seconds of an engine duration: a step's (`1m2.5s`, `812.3ms`, `18.58µs`) or a batch's (ISO 8601, `PT1M2.5S`). */
const seconds = (d: string) => [...d.toLowerCase().matchAll(/([\d.]+)(ms|µs|ns|h|m|s)/g)].reduce((n, [, v, unit]) => n + Number(v) * UNITS[unit], 0);
const STEP = 'processing tasks > indexing > ';

async function main() {
  const engine = new EmbeddedMeili({ dataDir: dataDir!, name: arg('engine') ?? 'meilisearch', autoRestart: false });
  await engine.start();
  const httpClient = createNodeHttpClient();
  try {
    const client = new Meilisearch({ host: engine.url!, apiKey: engine.masterKey, httpClient });
    const steps = new Map<string, number>();
    let batches = 0;
    let documents = 0;
    let total = 0;
    for (let from: number | null | undefined = undefined; ;) {
      const page = await client.batches.getBatches({ limit: 500, from, types: ['documentAdditionOrUpdate'] });
      for (const b of page.results) {
        batches++;
        documents += Number(b.details?.indexedDocuments ?? 0);
        total += seconds(b.duration ?? '');
        for (const [step, d] of Object.entries(b.stats.progressTrace ?? {})) {
          // The steps of the indexing phase, not their parts.
          const name = step.slice(STEP.length);
          if (step.startsWith(STEP) && !name.includes(' > ') && typeof d === 'string') steps.set(name, (steps.get(name) ?? 0) + seconds(d));
        }
      }
      if (page.next == null) break;
      from = page.next;
    }
    console.log(`${batches} batches of document additions, ${documents} documents, ${total.toFixed(1)} s`);
    for (const [step, s] of [...steps].sort((a, b) => b[1] - a[1])) {
      console.log(`  ${s.toFixed(1).padStart(7)} s  ${((100 * s) / total).toFixed(0).padStart(3)}%  ${step}`);
    }
  } finally {
    httpClient.destroy();
    await engine.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
