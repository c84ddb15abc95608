/**
 * Random and forged share link tokens never reach the database: reads N of them (default
 * 100,000) through HTTP and prints MariaDB's `Questions` counter before and after, read on a
 * connection of its own (each status query adds one question of its own; background work of the
 * service, such as the database watchdog's ping, can add a few more: the delta is printed next to
 * N so it can be judged). `Questions` counts every client of the server: run it on an idle
 * database server (on a shared one, other clients' traffic shows in the delta). So it also counts,
 * at the driver, the data statements this process's service sends meanwhile (`statementsSent`:
 * exact for this service alone, whatever else uses the database server), and the global delta of
 * an equally long idle window just after (`idleQuestionsDelta`: the other clients' share).
 *
 *   npx tsx bench/share-tokens.ts [N]
 */
import crypto from 'node:crypto';
import * as mariadb from 'mariadb';
import { connectionOptions } from '../src/db/client';
import { startTestMeili, stopTestMeili } from '../test/support/meili-engine';
import { startTestApp } from '../test/support/app';
import { countOn } from '../test/support/statements';

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 100_000);
  await startTestMeili();
  const app = await startTestApp({ env: { SHARE_READS_PER_MINUTE: String(n * 2), WORKERS_ENABLED: 'false' } });
  const conn = await mariadb.createConnection(connectionOptions(app.db.url));
  let statementsSent = 0;
  for (const pool of [app.deps.db.pool, app.deps.db.readPool]) countOn(pool, () => statementsSent++);
  try {
    const questions = async () => Number((await conn.query<Array<{ Value: string }>>("SHOW GLOBAL STATUS LIKE 'Questions'"))[0].Value);
    const before = await questions();
    const started = Date.now();
    let notFound = 0;
    for (let i = 0; i < n; i += 50) {
      const batch = Array.from({ length: Math.min(50, n - i) }, () => crypto.randomBytes(33).toString('base64url'));
      const answers = await Promise.all(batch.map((t) => app.request('GET', `/api/v1/share/${t}`)));
      notFound += answers.filter((r) => r.status === 404).length;
    }
    const after = await questions();
    const ms = Date.now() - started;
    const sent = statementsSent;
    await new Promise((r) => setTimeout(r, ms));
    const idle = (await questions()) - after - 1;
    console.log(JSON.stringify({ tokens: n, notFound, statementsSent: sent, questionsDelta: after - before - 1, idleQuestionsDelta: idle, ms }));
  } finally {
    await conn.end();
    await app.close();
    await stopTestMeili();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
