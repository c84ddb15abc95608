/**
 * The admin CLI's progress lines for runs counted in sessions (`search reindex`, `redact rescan`):
 * one per whole percent, with the pace so far and the time left at it.
 */
import { humanSeconds, percentLines } from '../../src/cli/progress-lines';

/** A test clock, the lines printed, and reporters that print there and read that clock. */
function recorder(start: number) {
  const t = {
    clock: start,
    lines: [] as string[],
    reporter: (label: string) =>
      percentLines(
        label,
        (l) => t.lines.push(l),
        () => t.clock,
      ),
  };
  return t;
}

test('one line per whole percent, with sessions per second and the time left at that pace', () => {
  const t = recorder(1_000_000);
  const progress = t.reporter('reindex');
  progress(0, 5000);
  t.clock += 10_000;
  progress(1000, 5000);
  progress(1001, 5000); // Still 20%: no line.
  t.clock += 5_000;
  progress(1200, 5000, '3 with new findings');
  t.clock += 40_000;
  progress(5000, 5000);
  expect(t.lines).toEqual([
    'reindex: 0/5000 sessions (0%)',
    'reindex: 1000/5000 sessions (20%), 100 sessions/s, 40s left',
    'reindex: 1200/5000 sessions (24%), 80 sessions/s, 48s left, 3 with new findings',
    'reindex: 5000/5000 sessions (100%), 91 sessions/s, 0s left',
  ]);
});

test('nothing to do is done; the pace is that since the first report, and a slow one keeps a decimal', () => {
  const t = recorder(0);
  t.reporter('rescan')(0, 0);
  expect(t.lines).toEqual(['rescan: 0/0 sessions (100%)']);
  // The pace is counted from the first report, not from when the reporter was made, nor from 0.
  const slow = t.reporter('reindex');
  t.clock += 60_000;
  slow(1, 200);
  t.clock += 4_000;
  slow(3, 200);
  expect(t.lines.slice(1)).toEqual(['reindex: 1/200 sessions (0%)', 'reindex: 3/200 sessions (1%), 0.5 sessions/s, 6m34s left']);
});

test('durations', () => {
  expect([humanSeconds(42.4), humanSeconds(59.6), humanSeconds(192), humanSeconds(3599.6), humanSeconds(3900), humanSeconds(NaN)]).toEqual([
    '42s',
    '1m0s',
    '3m12s',
    '1h0m',
    '1h5m',
    '?',
  ]);
});
