/**
 * `export` and `import` of the admin CLI: the same service functions as GET /export and
 * POST /import, with a progress bar (sessions and bytes, rate, time left) on a terminal and a
 * plain line every few seconds otherwise.
 */
import fs from 'node:fs';
import * as cliProgress from 'cli-progress';
import type { Config } from '../config';
import type { DbHandles } from '../db/client';
import { createLogger } from '../logger';
import { createOffload } from '../offload';
import type { Ctx, Deps } from '../services/context';
import { openExport } from '../services/exports';
import { importArchive } from '../services/imports';
import type { ImportSummary } from '../services/import-report';
import type { OnConflict } from '../services/import-session';
import { humanSeconds } from './progress-lines';

export interface ProgressSink {
  update(p: { label: string; sessions: number; sessionsTotal: number; bytes: number; bytesTotal: number | null }): void;
  stop(): void;
}

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];
export function humanBytes(n: number): string {
  let v = n;
  let u = 0;
  while (v >= 1000 && u < UNITS.length - 1) {
    v /= 1000;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${UNITS[u]}`;
}

/**
 * A bar drawn by cli-progress on a terminal (stderr), else one plain line at most every
 * `everyMs` (and at the end) on `out`.
 */
export function progressSink(tty: boolean, out: (line: string) => void, stream: NodeJS.WritableStream = process.stderr, everyMs = 2000): ProgressSink {
  let started = 0;
  let lastLine = 0;
  let label = '';
  let bar: cliProgress.SingleBar | null = null;
  let last: Parameters<ProgressSink['update']>[0] | null = null;
  const rateOf = (bytes: number) => {
    const s = (Date.now() - started) / 1000;
    return s > 0 ? bytes / s : 0;
  };
  const line = (p: NonNullable<typeof last>) => {
    const rate = rateOf(p.bytes);
    const left = p.bytesTotal && rate > 0 ? (p.bytesTotal - p.bytes) / rate : NaN;
    out(
      `${p.label}: ${p.sessions}/${p.sessionsTotal} sessions, ${humanBytes(p.bytes)}${p.bytesTotal ? ` of ${humanBytes(p.bytesTotal)}` : ''}, ${humanBytes(rate)}/s${p.bytesTotal ? `, ${humanSeconds(left)} left` : ''}`,
    );
  };
  return {
    update(p) {
      if (p.label !== label) {
        if (bar) bar.stop();
        else if (last) line(last);
        bar = null;
        label = p.label;
        started = Date.now();
        lastLine = 0;
        if (tty) {
          bar = new cliProgress.SingleBar(
            {
              format: '{label} |{bar}| {percentage}% | {sessions}/{sessionsTotal} sessions | {done}/{all} | {rate}/s | ETA {eta_formatted}',
              stream,
              hideCursor: true,
              etaBuffer: 50,
              fps: 5,
              noTTYOutput: false,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(Math.max(1, p.bytesTotal ?? 1), 0, {
            label,
            sessions: 0,
            sessionsTotal: p.sessionsTotal,
            done: '0 B',
            all: humanBytes(p.bytesTotal ?? 0),
            rate: '0 B',
          });
        }
      }
      last = p;
      if (bar) {
        if (p.bytesTotal !== null && p.bytesTotal !== bar.getTotal()) bar.setTotal(Math.max(1, p.bytesTotal));
        bar.update(p.bytes, {
          sessions: p.sessions,
          sessionsTotal: p.sessionsTotal,
          done: humanBytes(p.bytes),
          all: humanBytes(p.bytesTotal ?? p.bytes),
          rate: humanBytes(rateOf(p.bytes)),
        });
      } else if (Date.now() - lastLine >= everyMs) {
        lastLine = Date.now();
        line(p);
      }
    },
    stop() {
      if (bar) bar.stop();
      else if (last) line(last);
      bar = null;
      last = null;
    },
  };
}

function cliCtx(config: Config, db: DbHandles, userId: string): { ctx: Ctx; close: () => Promise<void> } {
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const offload = createOffload({ threads: config.offloadThreads });
  const deps: Deps = { config, db, logger, offload, search: undefined as never };
  return { ctx: { deps, user: { id: userId, keyId: null }, log: logger }, close: () => offload.close() };
}

export async function exportFromCli(
  config: Config,
  db: DbHandles,
  args: { userId: string; email: string; teamId?: string; projectIds: string[]; outFile: string },
  out: (line: string) => void,
  progress: ProgressSink,
): Promise<void> {
  const { ctx, close } = cliCtx(config, db, args.userId);
  const tmp = `${args.outFile}.partial`;
  try {
    const exp = await openExport(ctx, {
      projectIds: args.projectIds.length ? args.projectIds : undefined,
      teamId: args.teamId,
      onProgress: (p) =>
        progress.update({
          label: p.phase === 'scan' ? 'checksums' : 'export',
          sessions: p.sessions,
          sessionsTotal: p.sessionsTotal,
          bytes: p.bytes,
          bytesTotal: p.bytesTotal,
        }),
    });
    try {
      // Written beside the target and renamed at the end: a stopped export leaves no half file under its name.
      await exp.writeTo(fs.createWriteStream(tmp));
      fs.renameSync(tmp, args.outFile);
    } finally {
      await exp.close();
      progress.stop();
      fs.rmSync(tmp, { force: true });
    }
    out(
      `exported ${exp.projects} project${exp.projects === 1 ? '' : 's'}, ${exp.sessions} session${exp.sessions === 1 ? '' : 's'} of ${args.email} (${humanBytes(exp.size)}) to ${args.outFile}`,
    );
  } finally {
    await close();
  }
}

export async function importFromCli(
  config: Config,
  db: DbHandles,
  args: { userId: string; email: string; teamId?: string; file: string; onConflict: OnConflict },
  out: (line: string) => void,
  progress: ProgressSink,
): Promise<ImportSummary> {
  const { ctx, close } = cliCtx(config, db, args.userId);
  try {
    const size = fs.statSync(args.file).size;
    if (size > config.maxImportBytes) throw new Error(`${args.file} is larger than MAX_IMPORT_BYTES (${config.maxImportBytes} bytes)`);
    let summary: ImportSummary;
    try {
      summary = await importArchive(ctx, fs.createReadStream(args.file, { highWaterMark: 1024 * 1024 }), {
        onConflict: args.onConflict,
        teamId: args.teamId,
        maxBytes: config.maxImportBytes,
        maxFileBytes: config.maxBodyBytes,
        idleMs: 10 * 60_000,
        onProgress: (p) => progress.update({ label: 'import', sessions: p.sessions, sessionsTotal: p.sessionsTotal, bytes: p.bytes, bytesTotal: size }),
      });
    } finally {
      progress.stop();
    }
    const { projects: pr, sessions: s, errors, errorCount, failed } = summary;
    out(
      `projects: ${pr.created} created, ${pr.existing} existing; sessions: ${s.created} created, ${s.updated} updated, ${s.skipped} skipped, ${failed} not imported; ${errorCount} error${errorCount === 1 ? '' : 's'}`,
    );
    for (const e of errors) out(`error: ${e.path || '(archive)'}: ${e.error}`);
    if (errorCount > errors.length) out(`error: … and ${errorCount - errors.length} more`);
    return summary;
  } finally {
    await close();
  }
}
