import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as mariadb from 'mariadb';
import * as records from '../data/migrations';
import { sqlOn, type Sql } from '../data/sql';
import { connectionOptions, ensureDatabase, useUtcClock } from './client';

/**
 * Applies prisma/migrations/<name>/migration.sql in order and records each one in
 * `_prisma_migrations` exactly as `prisma migrate deploy` does (same table, sha256 checksum of the
 * file, finished_at, applied_steps_count), so either tool can take over from the other.
 */
export const MIGRATIONS_DIR = path.resolve(__dirname, '..', '..', 'prisma', 'migrations');
// When compiled to dist/src/db, the migrations folder is three levels up instead.
const migrationsDir = () => (fs.existsSync(MIGRATIONS_DIR) ? MIGRATIONS_DIR : path.resolve(__dirname, '..', '..', '..', 'prisma', 'migrations'));

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

function listMigrations(dir = migrationsDir()): Migration[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: crypto.createHash('sha256').update(sql).digest('hex') };
    });
}

/** Splits a migration file into statements (our files have no procedures or quoted semicolons). */
export function splitStatements(sql: string): string[] {
  return sql
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** What migrate() says when DATABASE_URL named a database that did not exist. */
export const createdDatabaseNote = (name: string | undefined) => `database ${name} did not exist: created it (empty)`;

interface MigrateResult {
  /** The database did not exist: it was created (empty) before the migrations. */
  createdDatabase: boolean;
  /** Migrations whose file changed after they were applied (each also logged as `warning: …`). */
  warnings: string[];
  applied: string[];
  alreadyApplied: string[];
}

export async function migrate(databaseUrl: string, log: (msg: string) => void = () => {}): Promise<MigrateResult> {
  const createdDatabase = await ensureDatabase(databaseUrl);
  if (createdDatabase) log(createdDatabaseNote(connectionOptions(databaseUrl).database));
  const conn = await mariadb.createConnection({ ...connectionOptions(databaseUrl), connectTimeout: 5000 });
  const db = sqlOn(conn);
  const result: MigrateResult = { createdDatabase, warnings: [], applied: [], alreadyApplied: [] };
  try {
    // One migrator at a time per database, across processes.
    if (!(await records.takeMigrationLock(db))) throw new Error('could not take the migration lock');
    await records.createMigrationsTable(db);
    const rows = await records.migrationRecords(db);
    for (const m of listMigrations()) {
      const done = rows.find((r) => r.migration_name === m.name && r.finished_at && !r.rolled_back_at);
      if (done) {
        if (done.checksum !== m.checksum) {
          const warning = `migration ${m.name} was modified after it was applied`;
          result.warnings.push(warning);
          log(`warning: ${warning}`);
        }
        result.alreadyApplied.push(m.name);
        continue;
      }
      const failed = rows.find((r) => r.migration_name === m.name && !r.finished_at && !r.rolled_back_at);
      if (failed) throw new Error(`migration ${m.name} failed earlier; resolve it before migrating again`);
      const id = crypto.randomUUID();
      await records.recordMigrationStarted(db, id, m.name, m.checksum);
      try {
        // The statements of the migration file, as written there.
        for (const stmt of splitStatements(m.sql)) await db.execute(stmt);
      } catch (err) {
        await records.recordMigrationFailed(db, id, String((err as Error).message));
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`);
      }
      await records.recordMigrationFinished(db, id);
      log(`applied migration ${m.name}`);
      result.applied.push(m.name);
    }
    await records.releaseMigrationLock(db);
  } finally {
    await conn.end();
  }
  return result;
}

/** True when every migration on disk is recorded as applied. */
export async function pendingMigrations(db: Sql): Promise<string[]> {
  const done = await records.appliedMigrationNames(db);
  return listMigrations()
    .map((m) => m.name)
    .filter((n) => !done.has(n));
}

if (require.main === module) {
  useUtcClock();
  const url = process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/session_archive';
  migrate(url, (m) => console.log(m)).then(
    (r) => console.log(`${r.applied.length} applied, ${r.alreadyApplied.length} already applied`),
    (e) => {
      console.error(e instanceof Error ? e.message : String(e));
      process.exit(1);
    },
  );
}
