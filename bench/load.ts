/**
 * Consistency and bounded work under load (docs/operations.md, "Consistency and load"), against
 * the real server process (`tsx src/main.ts`) on a fresh database, with both cores also kept busy
 * by two CPU burners:
 *   - 20 and 100 concurrent 5 MB uploads: acknowledged / refused busy / other, none half-written,
 *     peak service RSS;
 *   - a 48 MiB session: time to first byte of the markdown, RSS added by 20 concurrent readers;
 *   - the event-loop stall of one 45 MiB upload, seen as the slowest /healthz answer meanwhile.
 * Run: npx tsx bench/load.ts [--no-burn]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { BenchServer, freshDatabaseWithUser, request as send } from './support';

const MiB = 1024 * 1024;
const burn = !process.argv.includes('--no-burn');

/** A request whose body is counted, not kept (its first 200 bytes are, for messages). */
const request = (url: string, method: string, token: string, body?: Buffer, headers: Record<string, string> = {}) =>
  send(url, { method, token, body, headers, keep: 200, tolerant: true });

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Samples the RSS of pid every 50 ms while `work` runs; returns its peak. */
async function peakRss<T>(pid: number, work: () => Promise<T>): Promise<[T, number]> {
  let peak = rssMiB(pid);
  const t = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 50);
  try {
    return [await work(), Math.max(peak, rssMiB(pid))];
  } finally {
    clearInterval(t);
  }
}

async function main() {
  const { db, user } = await freshDatabaseWithUser('sa_bench_load');
  const token = user.token;
  let server: BenchServer | null = null;
  const burners: ChildProcess[] = [];
  try {
    server = await BenchServer.start({ env: { DATABASE_URL: db.url, RATE_LIMIT_REST_PER_HOUR: '1000000' } });
    const base = server.url;
    if (burn) for (let i = 0; i < 2; i++) burners.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
    const pid = server.pid;
    console.log(`service pid ${pid}, CPU burners: ${burners.length}, idle RSS ${rssMiB(pid).toFixed(0)} MiB\n`);

    const body5 = (i: number) =>
      Buffer.from(JSON.stringify({ name: `u${i}`, markdown: `# ${i}\n` + crypto.randomBytes(2_500_000).toString('hex').slice(0, 5_000_000) }));
    for (const n of [20, 100]) {
      const bodies = Array.from({ length: n }, (_, i) => body5(i));
      const ids = bodies.map(() => crypto.randomUUID());
      const t0 = performance.now();
      const [results, peak] = await peakRss(pid, () =>
        Promise.all(bodies.map((b, i) => request(`${base}/api/v1/projects/load${n}/sessions/${ids[i]}`, 'PUT', token, b))),
      );
      const secs = (performance.now() - t0) / 1000;
      const ack = results.filter((r) => r.status === 201).length;
      const busy = results.filter((r) => r.status === 503 && r.text.includes('Server busy')).length;
      // None half-written: an acknowledged upload reads back whole, a refused one is absent.
      let bad = 0;
      for (let i = 0; i < n; i++) {
        const head = await request(`${base}/api/v1/projects/load${n}/sessions/${ids[i]}`, 'HEAD', token);
        const stored = head.status === 200;
        if (results[i].status === 201 && !stored) bad++;
        if (results[i].status === 503 && stored) bad++;
      }
      console.log(
        `${n} × 5 MB uploads: ${ack} acknowledged, ${busy} busy, ${n - ack - busy} other, ${bad} inconsistent, peak RSS ${peak.toFixed(0)} MiB, ${secs.toFixed(1)} s`,
      );
    }

    // A 48 MiB session (its upload also measures the event-loop stall of a large upload).
    const big = Buffer.from(JSON.stringify({ name: 'big', markdown: 'x'.repeat(45 * MiB) }));
    let slowest = 0;
    let uploading = true;
    const pinger = (async () => {
      while (uploading) {
        const t = performance.now();
        await request(`${base}/healthz`, 'GET', token);
        slowest = Math.max(slowest, performance.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const bigId = crypto.randomUUID();
    const up = await request(`${base}/api/v1/projects/big/sessions/${bigId}`, 'PUT', token, big);
    uploading = false;
    await pinger;
    console.log(`45 MiB upload: ${up.status}; slowest /healthz meanwhile ${slowest.toFixed(0)} ms (event-loop stall bound)`);

    const bigMd = Buffer.from(JSON.stringify({ name: 'big48', markdown: 'y'.repeat(48 * MiB) }));
    const id48 = crypto.randomUUID();
    await request(`${base}/api/v1/projects/big/sessions/${id48}`, 'PUT', token, bigMd);
    const url48 = `${base}/api/v1/projects/big/sessions/${id48}`;
    const ttfb: number[] = [];
    for (let i = 0; i < 5; i++) ttfb.push((await request(url48, 'GET', token, undefined, { Accept: 'text/markdown' })).firstByteMs);
    ttfb.sort((x, y) => x - y);
    const before = rssMiB(pid);
    const [readers, peak] = await peakRss(pid, () =>
      Promise.all(Array.from({ length: 20 }, () => request(url48, 'GET', token, undefined, { Accept: 'text/markdown' }))),
    );
    const okReads = readers.filter((r) => r.status === 200 && r.bytes === 48 * MiB).length;
    console.log(`48 MiB markdown: first byte median ${ttfb[2].toFixed(0)} ms (min ${ttfb[0].toFixed(0)}, max ${ttfb[4].toFixed(0)})`);
    console.log(`20 concurrent readers of it: ${okReads}/20 complete, RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} MiB (+${(peak - before).toFixed(0)})`);
  } finally {
    for (const b of burners) b.kill('SIGKILL');
    await server?.stop();
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
