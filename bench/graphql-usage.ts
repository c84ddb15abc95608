/**
 * What counting GraphQL operation usage adds to a request (src/graphql/operation-usage.ts): the
 * plugin's `didResolveOperation` for an operation already seen (the cache hit every request but
 * the first takes) and for a new one (hash of the printed document and its coordinates), measured
 * in process on the console's own documents over the schema the service runs. The counts go to
 * the database in batches off the request path, so they are not part of a request's time. The
 * baseline beside each figure is the same loop without the plugin call (reading the request's
 * fields only). Run: npx tsx bench/graphql-usage.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildSchema, parse, type DocumentNode } from 'graphql';
import * as consoleDocuments from '../web/src/gql/graphql';
import { operationUsagePlugin } from '../src/graphql/operation-usage';
import { operationUsageRecorder } from '../src/services/graphql-usage';
import { createLogger } from '../src/logger';

const schema = buildSchema(fs.readFileSync(path.join(__dirname, '..', 'schema.graphql'), 'utf8'));
const docs: Array<{ text: string; document: DocumentNode }> = Object.values(consoleDocuments)
  .map(String)
  .filter((t) => /^\s*(query|mutation)\b/.test(t))
  .map((text) => ({ text, document: parse(text) }));

// The real recorder (its Map of counts per operation, client and day); its batches go nowhere here.
let flushed = 0;
const writes = {
  isSql: true as const,
  query: () => Promise.resolve([]),
  execute: () => Promise.resolve(++flushed),
};

const recorder = operationUsageRecorder({ db: { writes } as any }, createLogger('warn'), { periodic: true });
const headers = new Map([['graphql-client-name', 'session-archive-console']]);

async function listenerFor() {
  const plugin = operationUsagePlugin(recorder);

  return (await plugin.requestDidStart!({} as any))!;
}

const p95 = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length * 0.95)];

async function measure(label: string, rounds: number, fresh: boolean, baseline: boolean) {
  const times: number[] = [];
  let listener = await listenerFor();
  for (let i = 0; i < rounds; i++) {
    const d = docs[i % docs.length];
    // A new operation every time: a text the cache has not seen (a comment makes it distinct).
    const text = fresh ? `${d.text}\n# ${i}` : d.text;

    const rc: any = { schema, document: d.document, source: text, operationName: null, operation: null, request: { http: { headers } } };
    if (fresh && i % 500 === 0) listener = await listenerFor();
    const t = performance.now();
    if (baseline) void (rc.source + rc.request.http.headers.get('graphql-client-name'));
    else await listener.didResolveOperation!(rc);
    times.push(performance.now() - t);
  }
  return { label, p95: p95(times) };
}

async function main() {
  // Warm up V8 on both paths first.
  await measure('warm', 5_000, false, false);
  await measure('warm', 500, true, false);
  const rows = [
    await measure('no counting (baseline)', 50_000, false, true),
    await measure('counting, operation already seen', 50_000, false, false),
    await measure('counting, a new operation', 2_000, true, false),
  ];
  await recorder.stop();
  console.log(`${docs.length} console documents; ${flushed} batch statements`);
  for (const r of rows) console.log(`${r.label.padEnd(36)} p95 ${(r.p95 * 1000).toFixed(1)} µs`);
  console.log('goal: counting adds at most 0.2 ms (200 µs) p95 per request');
}

void main();
