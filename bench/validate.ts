/**
 * The upload body's validation alone (src/domain/upload.ts `validateUpload`), in process: what a
 * worker thread spends before redaction and digests. A 45 MiB markdown + 5 MiB raw data body with
 * full metadata (30 extra keys), and a small body (the common case), median of 9 runs each.
 * Run: npx tsx bench/validate.ts
 */
import { validateUpload } from '../src/domain/upload';
import { markdownOfSize } from './corpus-lite';

const MiB = 1024 * 1024;
const metadata = {
  clientName: 'specstory-cli',
  clientVersion: '1.2.3',
  agentName: 'claude-code',
  deviceId: 'laptop-1',
  llmModels: ['claude-sonnet-4', 'gpt-5'],
  tags: ['auth', 'db'],
  gitBranches: ['main', 'feat/x'],
  ...Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`extra${i}`, `value ${i}`])),
};

function median(f: () => void, runs = 9): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    f();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

const large = {
  name: 'large.md',
  markdown: markdownOfSize(45 * MiB),
  rawData: markdownOfSize(5 * MiB, 2),
  projectName: 'p',
  startedAt: '2025-01-02T10:00:00.000Z',
  metadata,
};
const small = { name: 'small.md', markdown: markdownOfSize(8 * 1024), rawData: '{"type":"user"}\n', metadata };
validateUpload(small);
console.log(`validateUpload, 50 MiB body: ${median(() => validateUpload(large)).toFixed(1)} ms`);
console.log(
  `validateUpload, 8 KiB body:  ${(
    (median(() => {
      for (let i = 0; i < 1000; i++) validateUpload(small);
    }) /
      1000) *
    1000
  ).toFixed(1)} µs`,
);
