/**
 * Progress of a long admin run counted in sessions (`search reindex`, `redact rescan`), as plain
 * lines: one each time the whole percent changes, with the pace so far and the time left at it.
 */

/** `42s`, `3m12s`, `1h5m`; `?` when not known. */
export function humanSeconds(s: number): string {
  if (!Number.isFinite(s)) return '?';
  const t = Math.max(0, Math.round(s));
  if (t >= 3600) return `${Math.floor(t / 3600)}h${Math.floor((t % 3600) / 60)}m`;
  return t >= 60 ? `${Math.floor(t / 60)}m${t % 60}s` : `${t}s`;
}

/**
 * A reporter of `done` of `total` sessions under `label`: `reindex: 1200/5000 sessions (24%),
 * 96 sessions/s, 40s left`, and `more` after it. The pace is that since the first report (a
 * reindex first queues every session, which is not the pace of what follows). `now` is the clock
 * (tests pass their own).
 */
export function percentLines(label: string, out: (line: string) => void, now: () => number = Date.now): (done: number, total: number, more?: string) => void {
  let first: { at: number; done: number } | null = null;
  let last = -1;
  return (done, total, more) => {
    first ??= { at: now(), done };
    const pct = total ? Math.floor((done / total) * 100) : 100;
    if (pct === last) return;
    last = pct;
    const elapsed = (now() - first.at) / 1000;
    const rate = elapsed > 0 ? (done - first.done) / elapsed : 0;
    const pace = rate > 0 ? `, ${rate >= 10 ? Math.round(rate) : rate.toFixed(1)} sessions/s, ${humanSeconds((total - done) / rate)} left` : '';
    out(`${label}: ${done}/${total} sessions (${pct}%)${pace}${more ? `, ${more}` : ''}`);
  };
}
