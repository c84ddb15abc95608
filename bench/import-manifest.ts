/**
 * An import's manifest against the event loop and memory (docs/export-import.md): archives whose
 * manifests list MANIFEST_MB (default 16, 48 and 63 MiB) of session files that never come (the
 * worst case for the answer: every session fails), imported through importArchive on a fresh
 * database, one at a time and then 4 at once. Per run: the longest event-loop delay, the longest
 * gap between 5 ms ticks that the process spent on a CPU (what a step of the import held the loop,
 * as opposed to waiting for a core on a loaded machine), the RSS added (peak, sampled every 20 ms),
 * the answer's size in bytes and its error count.
 * Run: npx tsx bench/import-manifest.ts   (MANIFEST_MB=16,48,63)
 */
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as tar from 'tar-stream';
import { loadConfig } from '../src/config';
import { createDb } from '../src/db/client';
import { createLogger } from '../src/logger';
import { inlineOffload } from '../src/offload';
import type { Ctx, Deps } from '../src/services/context';
import { importArchive } from '../src/services/imports';
import { createUser } from '../src/services/users';
import { operatorCtx } from '../src/services/context';
import { freshDatabase } from './support';

const MiB = 1024 * 1024;
const SIZES = (process.env.MANIFEST_MB ?? '16,48,63').split(',').map(Number);

/** A tar holding only a manifest of about `mb` MiB (canonical, indented), listing session files that never come. */
async function archiveOf(mb: number): Promise<Buffer> {
  const parts: string[] = [];
  let size = 0;
  while (size < mb * MiB - 200) {
    const line = `    {\n      "path": "projects/bench/sessions/${crypto.randomUUID()}/markdown.md",\n      "sha256": "${'0'.repeat(64)}",\n      "size": 1\n    }`;
    parts.push(line);
    size += line.length + 2;
  }
  parts.sort();
  const text = `{\n  "files": [\n${parts.join(',\n')}\n  ],\n  "format": "session-archive-export",\n  "projects": 1,\n  "sessions": ${parts.length},\n  "version": 1\n}\n`;
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: unknown) => void chunks.push(c as Buffer));
  const ended = new Promise<void>((r) => pack.on('end', () => r()));
  pack.entry({ name: 'manifest.json', mtime: new Date(0) }, Buffer.from(text));
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/** The archive as a network would bring it: 64 KiB chunks. */
const streamOf = (b: Buffer) =>
  Readable.from(
    (function* () {
      for (let i = 0; i < b.length; i += 64 * 1024) yield b.subarray(i, i + 64 * 1024);
    })(),
  );

async function main(): Promise<void> {
  const fresh = await freshDatabase('bench_import_manifest');
  const db = createDb(fresh.url);
  try {
    const config = loadConfig({ DATABASE_URL: fresh.url, JWT_SECRET: 'bench-import-manifest-secret', LOG_LEVEL: 'silent' });
    const user = await createUser(operatorCtx(db, config), `bench-${crypto.randomBytes(3).toString('hex')}@example.test`, 'Bench');
    const deps: Deps = { config, db, logger: createLogger('silent'), offload: inlineOffload, search: undefined as never };
    const ctx: Ctx = { deps, user: { id: user.id, keyId: null }, log: deps.logger };
    console.log(
      '| manifest | imports at once | longest event-loop delay | longest hold on a CPU (gap, CPU in it) | RSS added (peak) | answer | errors listed / counted |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const mb of SIZES) {
      const archive = await archiveOf(mb);
      for (const together of [1, 4]) {
        (globalThis as { gc?: () => void }).gc?.();
        const base = process.memoryUsage().rss;
        let peak = base;
        const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
        const h = monitorEventLoopDelay({ resolution: 5 });
        h.enable();
        // The longest gap between 5 ms ticks, and the process's CPU time inside it: a gap with little
        // CPU is this process waiting for a core (other processes), not a step holding the loop.
        let last = { at: performance.now(), cpu: process.cpuUsage() };
        let worst = { gapMs: 0, cpuMs: 0 };
        const ticker = setInterval(() => {
          const now = { at: performance.now(), cpu: process.cpuUsage() };
          const gapMs = now.at - last.at;
          const cpuMs = (now.cpu.user - last.cpu.user + now.cpu.system - last.cpu.system) / 1000;
          if (Math.min(gapMs, cpuMs) > Math.min(worst.gapMs, worst.cpuMs)) worst = { gapMs, cpuMs };
          last = now;
        }, 5);
        const answers = await Promise.all(
          Array.from({ length: together }, () =>
            importArchive(ctx, streamOf(archive), { onConflict: 'skip', maxBytes: 10 * 1024 * MiB, maxFileBytes: 50 * MiB }),
          ),
        );
        h.disable();
        clearInterval(sampler);
        clearInterval(ticker);
        const a = answers[0];
        const answer = Buffer.byteLength(JSON.stringify({ success: a.success, data: a }));
        console.log(
          `| ${mb} MiB (${(a.failed / 1000).toFixed(0)}k sessions) | ${together} | ${(h.max / 1e6).toFixed(0)} ms | ${worst.gapMs.toFixed(0)} ms, ${worst.cpuMs.toFixed(0)} ms CPU | ${((peak - base) / MiB).toFixed(0)} MiB | ${(answer / 1024).toFixed(1)} KiB | ${a.errors.length} / ${a.errorCount} |`,
        );
      }
    }
  } finally {
    await db.close();
    await fresh.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
