/**
 * Secret redaction: quality on the labelled corpus and cost.
 *   npx tsx bench/redact.ts            # corpus, throughput, hostile 50 MB inputs, upload share
 *   npx tsx bench/redact.ts --quick    # hostile inputs at 5 MB, 3 uploads per mode
 *
 * 1. Recall per format (each positive in markdown, escaped JSON Lines and a gzip body), overall
 *    recall of prefixed and contextual formats, false-positive rate on the hard negatives.
 * 2. Redaction time of the parts of a 5 MB upload (2.5 MB markdown, 2.5 MB JSON Lines raw data), next
 *    to JSON.parse of the same body (a baseline measured in the same run).
 * 3. Hostile inputs (patterns that make backtracking scanners explode): time per MB.
 * 4. A 5 MB upload (2.5 MB markdown + 2.5 MB raw data) over HTTP against a service with REDACT_SECRETS=off and
 *    one with on (same process, real MariaDB and Meilisearch): median PUT time, and redaction's share.
 */
import crypto from 'node:crypto';
import { markdownOfSize } from './corpus-lite';
import { bytesOf, redact } from '../src/redact';
import { loadCorpus, score } from '../test/redact/evaluate';
import { startTestApp } from '../test/support/app';
import { startTestMeili, stopTestMeili } from '../test/support/meili-engine';

const QUICK = process.argv.includes('--quick');
const MB = 1024 * 1024;
const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(2)}%`;
const ms = (t: bigint) => Number(t) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function time(f: () => unknown): number {
  const t = process.hrtime.bigint();
  f();
  return ms(process.hrtime.bigint() - t);
}

function corpusSection() {
  const corpus = loadCorpus();
  const s = score(corpus);
  console.log('\n## Corpus (test/redact/corpus.json; each positive in markdown, escaped JSON Lines, gzip body)\n');
  console.log('| format | kind | found |');
  console.log('|---|---|---|');
  for (const [format, f] of [...s.byFormat].sort()) console.log(`| ${format} | ${f.kind} | ${f.found}/${f.total} |`);
  const formats = new Set(corpus.positives.map((p) => p.format)).size;
  console.log(`\npositives: ${corpus.positives.length} in ${formats} formats; negatives: ${corpus.negatives.length}`);
  console.log(`recall, prefixed formats:   ${pct(s.prefixed.found, s.prefixed.total)} (${s.prefixed.found}/${s.prefixed.total})`);
  console.log(`recall, contextual formats: ${pct(s.contextual.found, s.contextual.total)} (${s.contextual.found}/${s.contextual.total})`);
  console.log(`recall, overall:            ${pct(s.prefixed.found + s.contextual.found, s.prefixed.total + s.contextual.total)}`);
  console.log(`false positives:            ${pct(s.negatives.flagged, s.negatives.total)} (${s.negatives.flagged}/${s.negatives.total})`);
  console.log(`shape broken (size or JSON): ${s.shapeBroken}`);
  for (const e of s.negatives.examples) console.log(`  FP ${e}`);
}

function rawJsonl(bytes: number): string {
  const md = markdownOfSize(bytes, 7);
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const l = JSON.stringify({
      type: i % 2 ? 'assistant' : 'user',
      uuid: crypto.randomUUID(),
      message: { content: md.slice((i * 997) % (md.length - 2000), ((i * 997) % (md.length - 2000)) + 1500) },
    });
    lines.push(l);
    size += l.length + 1;
  }
  return lines.join('\n') + '\n';
}

function throughputSection() {
  const md = markdownOfSize(2.5 * MB);
  const raw = rawJsonl(2.5 * MB);
  const body = JSON.stringify({ name: 'x', markdown: md, rawData: raw });
  // As an upload makes them (src/domain/upload.ts): ASCII text is then scanned as it is.
  const mdBuf = bytesOf(md);
  const rawBuf = bytesOf(raw);
  const runs = { parse: [] as number[], md: [] as number[], raw: [] as number[] };
  for (let i = 0; i < 7; i++) {
    runs.parse.push(time(() => JSON.parse(body)));
    runs.md.push(time(() => redact(mdBuf)));
    runs.raw.push(time(() => redact(rawBuf)));
  }
  console.log('\n## Throughput (median of 7, this process)\n');
  console.log('| input | redact | JSON.parse of the 5 MB body (baseline) |');
  console.log('|---|---|---|');
  console.log(`| 2.5 MB markdown | ${median(runs.md).toFixed(1)} ms | ${median(runs.parse).toFixed(1)} ms |`);
  console.log(`| 2.5 MB JSON Lines raw data | ${median(runs.raw).toFixed(1)} ms | |`);
  return median(runs.md) + median(runs.raw);
}

function hostileSection() {
  const size = (QUICK ? 5 : 50) * MB;
  const fill = (unit: string) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
  const cases: Array<[string, string]> = [
    ['one long token run (A…)', 'A'],
    ['repeated JWT starts (eyJ…)', 'eyJ'],
    ['JWT segments without end', 'eyJhbGciOiJIUzI1NiJ9.'],
    ['repeated prefixes', 'ghp_sk-ant-xoxb-AKIA'],
    ['key words and separators', 'password=key:token='],
    ['URL schemes', 'a://'],
    ['userinfo without @', 'x://user:pass'],
    ['PEM headers without end', '-----BEGIN RSA PRIVATE KEY-----\nMIIE'],
    ['JSON escapes', '\\n\\"'],
    ['mid-secret anchors', ':AA-usQ~.atlasv1.'],
    ['hex', '0123456789abcdef'],
    ['Bearer runs', 'Bearer '],
  ];
  console.log(`\n## Hostile inputs (${size / MB} MB each)\n`);
  console.log('| input | time | ms per MB |');
  console.log('|---|---|---|');
  for (const [name, unit] of cases) {
    const text = fill(unit);
    const t = time(() => redact(text));
    console.log(`| ${name} | ${t.toFixed(0)} ms | ${(t / (size / MB)).toFixed(1)} |`);
  }
}

async function uploadSection(redactMs: number) {
  await startTestMeili();
  const env = { MEILI_URL: process.env.MEILI_URL!, MEILI_MASTER_KEY: process.env.MEILI_MASTER_KEY!, WORKERS_ENABLED: 'false' };
  const md = markdownOfSize(2.5 * MB, 3);
  const raw = rawJsonl(2.5 * MB);
  const n = QUICK ? 5 : 15;
  // Both services run at once and take turns, so load from elsewhere on the machine hits both alike.
  const apps = {
    off: await startTestApp({ env: { ...env, REDACT_SECRETS: 'off' }, rateLimit: false }),
    on: await startTestApp({ env: { ...env, REDACT_SECRETS: 'on' }, rateLimit: false }),
  };
  const times: Record<'off' | 'on', number[]> = { off: [], on: [] };
  try {
    const users = { off: await apps.off.createUser('bench'), on: await apps.on.createUser('bench') };
    for (let i = 0; i < n + 1; i++) {
      for (const mode of i % 2 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const t = process.hrtime.bigint();
        const r = await apps[mode].request('PUT', `/api/v1/projects/bench/sessions/${crypto.randomUUID()}`, {
          token: users[mode].token,
          body: { name: `s${i}`, markdown: md, rawData: raw },
        });
        if (r.status !== 201) throw new Error(`upload failed: ${r.status}`);
        if (i > 0) times[mode].push(ms(process.hrtime.bigint() - t)); // the first round warms up
      }
    }
  } finally {
    await apps.off.close();
    await apps.on.close();
  }
  const results = { off: median(times.off), on: median(times.on) };
  await stopTestMeili();
  console.log(`\n## Upload of 5 MB (2.5 MB markdown + 2.5 MB raw data) (PUT, median of ${n})\n`);
  console.log('| REDACT_SECRETS | PUT time |');
  console.log('|---|---|');
  console.log(`| off (baseline) | ${results.off.toFixed(0)} ms |`);
  console.log(`| on | ${results.on.toFixed(0)} ms |`);
  console.log(
    `\nredaction's share of an upload: ${pct(results.on - results.off, results.on)} (difference of medians); ` +
      `scan time alone (both parts, in-process) ${redactMs.toFixed(0)} ms = ${pct(redactMs, results.on)} of the upload with redaction`,
  );
}

async function main() {
  corpusSection();
  const redactMs = throughputSection();
  hostileSection();
  await uploadSection(redactMs);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
