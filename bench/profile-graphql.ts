/**
 * Where the GraphQL batching query's CPU goes: starts a built service (`npm run build` first)
 * under `node --cpu-prof` on a fresh database seeded like bench/run.ts's GraphQL phase, drives
 * the same query with autocannon, stops the service and prints the CPU it spent per request and
 * the top frames by self time (bench/profile-rest.ts's summary). `--tree=<dir>` runs another
 * checkout's build (an older commit's worktree, to compare two trees on the same data).
 *   npx tsx bench/profile-graphql.ts [--quick] [--seconds=10] [--connections=50] [--no-prof] [--tree=/path/to/checkout]
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { markdownOfSize } from './corpus-lite';
import { summarise } from './cpu-profile';
import { BenchServer, freshDatabaseWithUser, request, ROOT } from './support';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;

async function main() {
  const quick = argv.includes('--quick');
  const seconds = Number(opt('seconds', quick ? '5' : '10'));
  const connections = Number(opt('connections', '50'));
  const tree = path.resolve(opt('tree', ROOT));
  const profDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-prof-out-'));
  const prof = argv.includes('--no-prof') ? [] : ['--cpu-prof', `--cpu-prof-dir=${profDir}`];
  const { db, user } = await freshDatabaseWithUser('sa_gqlprof');
  let service: BenchServer | null = null;
  let cpuUs = 0;
  let rps = 0;
  try {
    service = await BenchServer.start({
      entry: ['dist/src/main.js'],
      cwd: tree,
      nodeArgs: prof,
      output: 'stderr',
      ready: '/readyz',
      env: { DATABASE_URL: db.url, RATE_LIMIT_REST_PER_HOUR: '1000000000', RATE_LIMIT_GRAPHQL_PER_HOUR: '1000000000', AUTH_FAILURE_LIMIT: '1000000000' },
    });
    const base = service.url;
    const send = (method: string, p: string, body: string) => request(new URL(p, base), { method, token: user.token, body });
    // bench/run.ts's data: 10 × 5 sessions (quick) or 50 × 20 of 1 KB, in 20 uploads at a time.
    const [projects, perProject] = quick ? [10, 5] : [50, 20];
    const md = markdownOfSize(1024, 2);
    const jobs: Array<() => Promise<unknown>> = [];
    for (let p = 0; p < projects; p++) {
      for (let s = 0; s < perProject; s++) {
        const body = JSON.stringify({ name: `session ${s}`, markdown: md, metadata: { clientName: 'bench', llmModels: ['claude-sonnet-4'], tags: ['bench'] } });
        jobs.push(() => send('PUT', `/api/v1/projects/gql-${p}/sessions/${crypto.randomUUID()}`, body));
      }
    }
    for (let i = 0; i < jobs.length; i += 20) await Promise.all(jobs.slice(i, i + 20).map((j) => j()));
    const query = JSON.stringify({ query: '{ projects { sessionCount lastActivity sessions(limit: 5) { id name project { name } metadata { tags } } } }' });
    const probe = await send('POST', '/api/v1/graphql', query);
    if (probe.status !== 200) throw new Error(`GraphQL answered ${probe.status}`);
    // CPU of the server under the load (user + system, /proc), per request.
    const cpuMs = () =>
      fs
        .readFileSync(`/proc/${service!.pid}/stat`, 'utf8')
        .split(') ')[1]
        .split(' ')
        .slice(11, 13)
        .reduce((a, t) => a + Number(t) * 10, 0);
    const cpu0 = cpuMs();
    const args = [path.join(ROOT, 'node_modules/autocannon/autocannon.js'), '-j', '-c', String(connections), '-d', String(seconds)];
    args.push('-m', 'POST', '-H', `Authorization=Bearer ${user.token}`, '-H', 'Content-Type=application/json', '-b', query);
    const r = JSON.parse(execFileSync(process.execPath, [...args, `${base}/api/v1/graphql`], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
    rps = r.requests.average;
    cpuUs = (1000 * (cpuMs() - cpu0)) / (rps * seconds);
    console.log(
      `graphql batching (${tree}): ${Math.round(rps)} req/s, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx + r.errors}; ${cpuUs.toFixed(0)} µs CPU per request`,
    );
  } finally {
    await service?.stop();
    await db.drop();
  }
  const file = fs.readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (file) {
    const kept = path.join(os.tmpdir(), `sa-prof-graphql-${Date.now()}.cpuprofile`);
    fs.renameSync(path.join(profDir, file), kept);
    console.log(`(profile: ${kept})\n`);
    console.log(summarise(kept, seconds + 1, 40).join('\n'));
  }
  fs.rmSync(profDir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
