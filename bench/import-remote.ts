/**
 * `import-remote` from a source that answers after a delay (a server across a network): sessions
 * of the bench corpus (bench/corpus.ts) served by a small source that speaks the hosted service's
 * REST shapes, each answer held `--latency-ms`, copied into a fresh database by the CLI's own
 * import-remote, once per `--concurrency` value. Prints each run's rate beside the first one's.
 *
 *   npx tsx bench/import-remote.ts [--sessions=300] [--latency-ms=50] [--concurrency=1,4,8]
 *
 * A fresh database per run, dropped at the end (also on failure).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { importRemoteFromCli } from '../src/cli/import-remote';
import { loadConfig } from '../src/config';
import { createDb } from '../src/db/client';
import { operatorCtx } from '../src/services/context';
import { createUser } from '../src/services/users';
import { generateSession, vocabulary } from './corpus';
import { arg, BENCH_JWT_SECRET, freshDatabase } from './support';

const SESSIONS = Number(arg('sessions') ?? 300);
const LATENCY_MS = Number(arg('latency-ms') ?? 50);
const CONCURRENCY = (arg('concurrency') ?? '1,4,8').split(',').map(Number);
const log = (s: string) => process.stdout.write(`${s}\n`);

async function main(): Promise<void> {
  const words = vocabulary();
  const projectId = 'remote-bench';
  const sessions = Array.from({ length: SESSIONS }, (_, i) => {
    const s = generateSession(i + 1, words);
    return { id: crypto.randomUUID(), name: s.name, markdown: s.markdown, updatedAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() };
  });
  const byId = new Map<string, (typeof sessions)[number]>(sessions.map((s) => [s.id, s]));
  const listed = sessions.map(({ markdown, ...s }) => ({ ...s, markdownSize: Buffer.byteLength(markdown) }));
  const source = http.createServer((req, res) => {
    const url = req.url ?? '';
    const answer = (data: unknown) =>
      setTimeout(() => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ success: true, data }));
      }, LATENCY_MS);
    if (url === '/api/v1/projects') return answer({ projects: [{ id: projectId, name: 'Remote' }] });
    if (url === `/api/v1/projects/${projectId}/sessions`) return answer({ sessions: listed });
    const s = byId.get(url.split('/').pop() ?? '');
    if (s) return answer({ session: { ...listed.find((x) => x.id === s.id), markdownContent: s.markdown } });
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise<void>((r) => source.listen(0, '127.0.0.1', r));
  const from = `http://127.0.0.1:${(source.address() as { port: number }).port}`;
  const mb = sessions.reduce((n, s) => n + Buffer.byteLength(s.markdown), 0) / 1024 / 1024;
  log(`import-remote: ${SESSIONS} sessions (${mb.toFixed(1)} MB of markdown), each answer of the source after ${LATENCY_MS} ms`);
  let first = 0;
  try {
    for (const concurrency of CONCURRENCY) {
      const database = await freshDatabase('sa_bench_remote');
      const db = createDb(database.url);
      try {
        const config = loadConfig({ DATABASE_URL: database.url, JWT_SECRET: BENCH_JWT_SECRET, LOG_LEVEL: 'silent' });
        const user = await createUser(operatorCtx(db), `remote-${concurrency}@example.test`, 'Remote');
        const t = performance.now();
        const failed = await importRemoteFromCli(config, db, { userId: user.id, from, token: 't', projectIds: [], concurrency }, () => undefined, {
          update: () => undefined,
          stop: () => undefined,
        });
        const s = (performance.now() - t) / 1000;
        if (failed) throw new Error(`${failed} not copied`);
        const rate = SESSIONS / s;
        first ||= rate;
        log(
          `  --concurrency=${String(concurrency).padEnd(2)} ${s.toFixed(1).padStart(6)} s   ${rate.toFixed(1).padStart(6)} sessions/s   ${(rate / first).toFixed(1)}× the first`,
        );
      } finally {
        await db.close();
        await database.drop();
      }
    }
  } finally {
    await new Promise((r) => source.close(r));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
