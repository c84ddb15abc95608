/**
 * The rule "Large reads stream": 10 concurrent REST JSON reads (`GET …/sessions/{id}`, which
 * carries the markdown as `markdownContent`) of a 45 MiB session, against the real server process
 * (`tsx src/main.ts`, search worker off so indexing does not share the CPU) on a fresh database.
 * Prints, per read, the time to the first byte of the body and to the last, and checks every
 * answer parses to the uploaded markdown.
 * Run: npx tsx bench/json-reads.ts [--readers=10] [--rounds=3]
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { markdownOfSize } from './corpus-lite';
import { arg, BenchServer, freshDatabaseWithUser, median, request } from './support';

const MiB = 1024 * 1024;
const READERS = Number(arg('readers') ?? 10);
const ROUNDS = Number(arg('rounds') ?? 3);

/** One JSON read: ms to the first body byte and to the end, and the parsed markdown's digest. */
async function timedRead(url: string, token: string): Promise<{ status: number; firstByte: number; total: number; digest: string }> {
  const r = await request(url, { token, headers: { Accept: 'application/json' } });
  const md = JSON.parse(r.text)?.data?.session?.markdownContent ?? '';
  return { status: r.status, firstByte: r.firstByteMs, total: r.ms, digest: crypto.createHash('sha256').update(md).digest('hex') };
}

async function main() {
  const markdown = markdownOfSize(45 * MiB, 3);
  const digest = crypto.createHash('sha256').update(markdown).digest('hex');
  const { db, user } = await freshDatabaseWithUser('sa_bench_json');
  const token = user.token;
  let server: BenchServer | null = null;
  try {
    server = await BenchServer.start({ env: { DATABASE_URL: db.url + (process.env.BENCH_DB_QUERY ?? ''), MEILI_URL: '' }, ready: '/readyz' });
    const base = server.url;
    const sid = crypto.randomUUID();
    const up = await request(`${base}/api/v1/projects/big/sessions/${sid}`, { method: 'PUT', token, body: { name: 'big', markdown } });
    if (up.status !== 201) throw new Error(`upload answered ${up.status}: ${up.text.slice(0, 200)}`);
    const url = `${base}/api/v1/projects/big/sessions/${sid}`;
    await timedRead(url, token); // warm-up
    console.log(
      `${READERS} concurrent JSON reads of a ${(Buffer.byteLength(markdown) / MiB).toFixed(1)} MiB session, ${ROUNDS} rounds; load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    const firsts: number[] = [];
    const totals: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const rs = await Promise.all(Array.from({ length: READERS }, () => timedRead(url, token)));
      for (const r of rs) {
        if (r.status !== 200 || r.digest !== digest) throw new Error(`a read answered ${r.status} or other markdown`);
        firsts.push(r.firstByte);
        totals.push(r.total);
      }
      console.log(
        `round ${round + 1}: first byte ${rs.map((r) => r.firstByte.toFixed(0)).join(', ')} ms; complete ${rs.map((r) => (r.total / 1000).toFixed(1)).join(', ')} s`,
      );
    }
    console.log(
      `first byte: median ${median(firsts).toFixed(0)} ms, max ${Math.max(...firsts).toFixed(0)} ms; complete: median ${(median(totals) / 1000).toFixed(1)} s, max ${(Math.max(...totals) / 1000).toFixed(1)} s`,
    );
  } finally {
    await server?.stop();
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
