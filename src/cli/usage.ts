/** `usage recompute`: every stored session's usage read again from its raw log, at the configured prices. */
import type { Config } from '../config';
import type { DbHandles } from '../db/client';
import { recomputeUsage, type RecomputeProgress } from '../services/usage';

interface RecomputeRun {
  config: Config;
  db: DbHandles;
  /** `PROJECT/SESSION`: start after this session (what a stopped run printed last). */
  after?: string;
  batch?: number;
  out: (line: string) => void;
}

/** Parses `--after PROJECT/SESSION`; null when it is not of that shape. */
export function parseAfter(v: string): { projectId: string; sessionId: string } | null {
  const i = v.lastIndexOf('/');
  if (i <= 0 || i === v.length - 1) return null;
  return { projectId: v.slice(0, i), sessionId: v.slice(i + 1).toLowerCase() };
}

/** One line per batch naming the last session done: a run stopped midway goes on with `--after` it. */
export async function recomputeFromCli({ config, db, after, batch, out }: RecomputeRun): Promise<RecomputeProgress> {
  const line = (p: RecomputeProgress) =>
    `usage recompute: ${p.sessions} sessions, ${p.withUsage} with usage${p.last ? `, last ${p.last.projectId}/${p.last.sessionId}` : ''}`;
  const done = await recomputeUsage({ db }, { prices: config.prices, after: after ? parseAfter(after) : null, batch, onBatch: (p) => out(line(p)) });
  out(
    `usage recompute complete: ${done.sessions} sessions read, ${done.withUsage} with usage (prices: ${config.prices.source ?? 'PRICES_FILE'}, ${config.prices.date ?? 'undated'})`,
  );
  return done;
}
