/**
 * What one statement costs MariaDB and the driver, variant by variant: each is run N times by 50
 * concurrent callers on a pool of 10 connections against a fresh database holding one session of
 * 20 KB (seeded through the service), and the database server's CPU (from /proc) and this
 * process's CPU are divided by N. Text protocol (`query`) by default; EXEC=1 runs each through a
 * prepared statement (`execute`). The variants are the credential and session reads in the
 * shapes compared when choosing the current ones (a memberships subquery against a join, with and
 * without the project's owner name and appearance); docs/benchmarks.md has the current ones' cost.
 *   npx tsx bench/statements.ts            # every variant, twice
 *   V=keySubquery,keyJoin EXEC=1 N=20000 npx tsx bench/statements.ts
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import * as mariadb from 'mariadb';
import { connectionOptions } from '../src/db/client';
import { SESSION_COLUMNS } from '../src/data/sessions';
import { markdownOfSize } from './corpus-lite';
import { BenchServer, freshDatabaseWithUser, request } from './support';

const dbPid = execFileSync('pidof', ['mariadbd'], { encoding: 'utf8' }).trim().split(/\s+/)[0];
const ticksMs = (stat: string) =>
  stat
    .split(') ')[1]
    .split(' ')
    .slice(11, 13)
    .reduce((a, t) => a + Number(t) * 10, 0);
const dbCpuMs = () => ticksMs(fs.readFileSync(`/proc/${dbPid}/stat`, 'utf8'));
const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const KEY_STATE = 'k.userId, k.kind, k.expiresAt, k.revokedAt, k.lastUsedAt, k.scopes, u.role, u.disabledAt';
const OWNER_NAME =
  "CASE p.ownerType WHEN 'team' THEN (SELECT t.name FROM teams t WHERE t.id = p.ownerId) ELSE (SELECT COALESCE(u.name, u.email) FROM users u WHERE u.id = p.ownerId) END AS ownerName";

async function main() {
  const { db, user } = await freshDatabaseWithUser('sa_bench_stmt');
  const pool = mariadb.createPool({ ...connectionOptions(db.url), connectionLimit: 10 });
  try {
    const service = await BenchServer.start({ entry: ['dist/src/main.js'], output: 'ignore', ready: '/readyz', env: { DATABASE_URL: db.url } });
    const id = crypto.randomUUID();
    try {
      const body = JSON.stringify({ name: 's', markdown: markdownOfSize(20 * 1024, 1), metadata: { clientName: 'bench' } });
      const r = await request(new URL(`/api/v1/projects/bench-list/sessions/${id}`, service.url), { method: 'PUT', token: user.token, body });
      if (r.status >= 300) throw new Error(`seed failed: ${r.status}`);
    } finally {
      await service.stop();
    }
    const [{ id: keyId }] = await pool.query<Array<{ id: string }>>('SELECT id FROM api_keys LIMIT 1');
    const session = (projectColumns: string) =>
      `SELECT p.ownerId, p.ownerType${projectColumns}, ${SESSION_COLUMNS} FROM projects p LEFT JOIN sessions s ON s.projectId = p.id AND s.id = ? WHERE p.id = ?`;
    const variants: Record<string, [string, unknown[]]> = {
      keyOnly: ['SELECT userId, expiresAt, revokedAt, lastUsedAt FROM api_keys WHERE id = ?', [keyId]],
      keySubquery: [
        `SELECT ${KEY_STATE}, (SELECT GROUP_CONCAT(CONCAT(m.teamId, ':', m.role) ORDER BY m.teamId SEPARATOR ',') FROM team_members m WHERE m.userId = k.userId) AS memberships
           FROM api_keys k JOIN users u ON u.id = k.userId WHERE k.id = ?`,
        [keyId],
      ],
      keyJoin: [
        `SELECT ${KEY_STATE}, m.teamId, m.role AS teamRole FROM api_keys k JOIN users u ON u.id = k.userId LEFT JOIN team_members m ON m.userId = k.userId WHERE k.id = ? ORDER BY m.teamId`,
        [keyId],
      ],
      keyNoTeams: [`SELECT ${KEY_STATE} FROM api_keys k JOIN users u ON u.id = k.userId WHERE k.id = ?`, [keyId]],
      sessionWithAppearance: [session(`, ${OWNER_NAME}, p.name AS projectName, p.icon AS projectIcon, p.color AS projectColor`), [id, 'bench-list']],
      sessionOwnerOnly: [session(''), [id, 'bench-list']],
      select1: ['SELECT 1', []],
    };
    const N = Number(process.env.N ?? 20000);
    const exec = process.env.EXEC === '1';
    const which = (process.env.V ?? Object.keys(variants).join(',')).split(',');
    console.log(`${exec ? 'prepared (execute)' : 'text (query)'}, ${N} statements per variant, 50 callers on 10 connections`);
    for (let round = 0; round < 2; round++) {
      for (const name of which) {
        const [sql, params] = variants[name];
        let left = N;
        const [d0, c0, t0] = [dbCpuMs(), ownCpuMs(), performance.now()];
        await Promise.all(
          Array.from({ length: 50 }, async () => {
            while (left-- > 0) await (exec ? pool.execute(sql, params) : pool.query(sql, params.length ? params : undefined));
          }),
        );
        const seconds = (performance.now() - t0) / 1000;
        const per = (ms: number) => ((ms * 1000) / N).toFixed(0).padStart(4);
        console.log(`${name.padEnd(22)} ${(N / seconds).toFixed(0).padStart(6)}/s  MariaDB ${per(dbCpuMs() - d0)} µs  driver ${per(ownCpuMs() - c0)} µs`);
      }
    }
  } finally {
    await pool.end();
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
