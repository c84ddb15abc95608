/**
 * What reading a session's usage costs at upload.
 *   npx tsx bench/usage.ts            # 5, 20 and 50 MB raw logs
 *   npx tsx bench/usage.ts --quick    # 5 MB only
 *
 * For a Claude Code log (the test fixture's records repeated, each message id made unique, with
 * plain user lines between them) and a log without usage records (same size): the reader's time
 * per MB (src/domain/upload.ts `usageOfRaw`), and its share of the whole preparation of an upload
 * of that raw data (validation, redaction, digests: `prepareUpload` with and without prices).
 * Median of 5 runs each, on this machine.
 */
import fs from 'node:fs';
import path from 'node:path';
import { prepareUpload, usageOfRaw } from '../src/domain/upload';
import { SHIPPED_PRICES } from '../src/domain/usage';

const QUICK = process.argv.includes('--quick');
const MB = 1024 * 1024;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function time(f: () => unknown): number {
  const t = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

const fixture = fs
  .readFileSync(path.join(__dirname, '../test/fixtures/usage/claude/projects/-work-demo/3f1c2a9e-6b1d-4c55-9a57-1d2e8f0a4b61.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean);
const filler = JSON.stringify({ type: 'user', message: { role: 'user', content: 'x'.repeat(2000) } });

function claudeLog(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = i % 2 ? filler : fixture[i % fixture.length].replace(/"msg_([^"]*)"/, `"msg_$1_${i}"`);
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

function plainLog(bytes: number): string {
  return `${Array.from({ length: Math.ceil(bytes / (filler.length + 1)) }, () => filler).join('\n')}\n`;
}

for (const size of QUICK ? [5] : [5, 20, 50]) {
  for (const [kind, raw] of [
    ['Claude Code', claudeLog(size * MB)],
    ['no usage', plainLog(size * MB)],
  ] as const) {
    const bytes = Buffer.from(raw);
    const body = { name: 's', markdown: '# m', rawData: raw };
    const read = median(Array.from({ length: 5 }, () => time(() => usageOfRaw(bytes, SHIPPED_PRICES))));
    const without = median(Array.from({ length: 5 }, () => time(() => prepareUpload(body, 'on'))));
    const withPrices = median(Array.from({ length: 5 }, () => time(() => prepareUpload(body, 'on', SHIPPED_PRICES))));
    console.log(
      `${size} MB ${kind}: usage read ${read.toFixed(1)} ms (${(read / size).toFixed(2)} ms/MB); upload preparation ${without.toFixed(1)} → ${withPrices.toFixed(1)} ms with usage (+${(((withPrices - without) / without) * 100).toFixed(1)}%)`,
    );
  }
}
