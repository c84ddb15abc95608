/** A `node --cpu-prof` profile summarised: the top frames by self time, and the same by package. */
import fs from 'node:fs';

interface Frame {
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  id: number;
}
interface Profile {
  nodes: Frame[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Top frames by self time and the same by package, as printable lines. */
export function summarise(file: string, lastSeconds = Infinity, top = 25): string[] {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  // Only the load: samples of the last `lastSeconds` (start-up and seeding left out).
  const from = prof.endTime - lastSeconds * 1e6;
  let at = prof.startTime;
  prof.samples.forEach((id, i) => {
    at += prof.timeDeltas[i] ?? 0;
    if (at >= from) self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self.entries()].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((a, [, t]) => a + t, 0);
  const busy = total - idle;
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, t] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    // Paths from the checkout's root (this one or another tree's): dist/…, node_modules/….
    const where = url.replace(/^file:\/\//, '').replace(/^\/.*?\/(dist|node_modules)\//, '$1/');
    const key = `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : ''}`.trim();
    frames.set(key, (frames.get(key) ?? 0) + t);
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1];
    const area =
      pkg ??
      (where.startsWith('node:')
        ? where.split('/')[0].replace(/^node:internal$/, 'node:internal')
        : where.startsWith('dist/')
          ? 'service (dist/)'
          : where
            ? where
            : functionName);
    areas.set(area, (areas.get(area) ?? 0) + t);
  }
  const pct = (t: number) => `${((100 * t) / busy).toFixed(1).padStart(5)}%`;
  const out = [`busy ${(busy / 1e6).toFixed(1)} s of ${(total / 1e6).toFixed(1)} s profiled (shares below are of busy time)`, '', 'top frames by self time:'];
  for (const [k, t] of [...frames].sort((a, b) => b[1] - a[1]).slice(0, top)) out.push(`${pct(t)}  ${k}`);
  out.push('', 'self time by package / area:');
  for (const [k, t] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 20)) out.push(`${pct(t)}  ${k}`);
  return out;
}
