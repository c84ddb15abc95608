/** `content migrate --to s3|db` and `content sweep`: the admin CLI's side of the content store. */
import cliProgress from 'cli-progress';
import type { Config } from '../config';
import type { ContentStore } from '../data/content-store';
import { migrateContent, type MigrateProgress } from '../data/content-store/migrate';
import { sweepObjects, SWEEP_GRACE_MS } from '../data/content-store/sweep';
import type { DbHandles } from '../db/client';
import { humanBytes } from './archive';

/**
 * Moves every session's content to `to`, with a bar on a terminal (stderr), else a line at most
 * every 2 s; run it again to resume after an interruption.
 */
interface MigrateRun {
  config: Config;
  db: DbHandles;
  store: ContentStore;
  to: 's3' | 'db';
  out: (line: string) => void;
  /** A progress bar (a terminal on stderr) rather than lines. */
  tty?: boolean;
}

export async function migrateFromCli({ config, db, store, to, out, tty = Boolean(process.stderr.isTTY) }: MigrateRun): Promise<MigrateProgress> {
  const ui: { bar: cliProgress.SingleBar | null } = { bar: null };
  let lastLine = 0;
  const started = Date.now();
  const rate = (p: MigrateProgress) => humanBytes(p.bytes / Math.max(0.001, (Date.now() - started) / 1000));
  const line = (p: MigrateProgress) =>
    out(`content migrate --to ${to}: ${p.done}/${p.total} sessions, ${p.moved} moved, ${p.skipped} changed meanwhile, ${humanBytes(p.bytes)}, ${rate(p)}/s`);
  const result = await migrateContent(db, store, to, (p) => {
    if (tty) {
      if (!ui.bar) {
        ui.bar = new cliProgress.SingleBar(
          {
            format: `to ${to} |{bar}| {percentage}% | {value}/{total} sessions | {bytes} | {rate}/s | ETA {eta_formatted}`,
            stream: process.stderr,
            hideCursor: true,
            fps: 5,
          },
          cliProgress.Presets.shades_classic,
        );
        ui.bar.start(Math.max(1, p.total), 0, { bytes: '0 B', rate: '0 B' });
      }
      if (p.total !== ui.bar.getTotal()) ui.bar.setTotal(Math.max(1, p.total));
      ui.bar.update(p.done, { bytes: humanBytes(p.bytes), rate: rate(p) });
    } else if (Date.now() - lastLine >= 2000) {
      lastLine = Date.now();
      line(p);
    }
  }).finally(() => ui.bar?.stop());
  line(result);
  out(
    `content migrate complete: ${result.moved} session${result.moved === 1 ? '' : 's'} moved to ${to === 's3' ? `bucket ${store.objects?.bucket ?? ''}` : 'the database'}` +
      (result.skipped ? `; ${result.skipped} changed while being moved: run the command again` : ''),
  );
  if (config.contentStore !== to)
    out(`note: CONTENT_STORE is ${config.contentStore}, so new content is still written to ${config.contentStore === 's3' ? 'S3' : 'the database'}`);
  if (to === 'db') out('the objects of the moved content are deleted by the content sweep (`content sweep`, or the service hourly) after the grace period');
  return result;
}

/** One sweep now; `graceMinutes` overrides the grace period (0 deletes every unreferenced object that is not in flight right now). */
export async function sweepFromCli(db: DbHandles, store: ContentStore, graceMinutes: number | undefined, out: (line: string) => void): Promise<void> {
  if (!store.objects) {
    out('content sweep: no bucket configured (S3_BUCKET): nothing to sweep');
    return;
  }
  const r = await sweepObjects(db.writes, store, { graceMs: graceMinutes === undefined ? SWEEP_GRACE_MS : graceMinutes * 60_000 });
  out(
    `content sweep: ${r.listed} objects listed, ${r.deleted} unreferenced deleted (${humanBytes(r.deletedBytes)}), ${r.pending} unreferenced kept until their grace period ends`,
  );
}
