import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as mariadb from 'mariadb';
import { connectionOptions, ensureDatabase } from './client';

/**
 * Applies prisma/migrations/<name>/migration.sql in order and records each one in
 * `_prisma_migrations` exactly as `prisma migrate deploy` does (same table, sha256 checksum of the
 * file, finished_at, applied_steps_count), so either tool can take over from the other.
 */
export const MIGRATIONS_DIR = path.resolve(__dirname, '..', '..', 'prisma', 'migrations');
// When compiled to dist/src/db, the migrations folder is three levels up instead.
const migrationsDir = () =>
  fs.existsSync(MIGRATIONS_DIR) ? MIGRATIONS_DIR : path.resolve(__dirname, '..', '..', '..', 'prisma', 'migrations');

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             DATETIME(3),
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          DATETIME(3),
    started_at              DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    applied_steps_count     INTEGER UNSIGNED NOT NULL DEFAULT 0
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function listMigrations(dir = migrationsDir()): Migration[] {
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

export interface MigrateResult {
  applied: string[];
  alreadyApplied: string[];
}

export async function migrate(databaseUrl: string, log: (msg: string) => void = () => {}): Promise<MigrateResult> {
  await ensureDatabase(databaseUrl);
  const conn = await mariadb.createConnection({ ...connectionOptions(databaseUrl), connectTimeout: 5000 });
  const result: MigrateResult = { applied: [], alreadyApplied: [] };
  try {
    // One migrator at a time per database, across processes.
    const [{ got }] = await conn.query("SELECT GET_LOCK(CONCAT(DATABASE(), '.migrate'), 60) AS got");
    if (Number(got) !== 1) throw new Error('could not take the migration lock');
    await conn.query(CREATE_TABLE);
    const rows: Array<{ migration_name: string; checksum: string; finished_at: Date | null; rolled_back_at: Date | null }> =
      await conn.query('SELECT migration_name, checksum, finished_at, rolled_back_at FROM _prisma_migrations');
    for (const m of listMigrations()) {
      const done = rows.find((r) => r.migration_name === m.name && r.finished_at && !r.rolled_back_at);
      if (done) {
        if (done.checksum !== m.checksum) log(`warning: migration ${m.name} was modified after it was applied`);
        result.alreadyApplied.push(m.name);
        continue;
      }
      const failed = rows.find((r) => r.migration_name === m.name && !r.finished_at && !r.rolled_back_at);
      if (failed) throw new Error(`migration ${m.name} failed earlier; resolve it before migrating again`);
      const id = crypto.randomUUID();
      await conn.query(
        'INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, NOW(3), 0)',
        [id, m.checksum, m.name],
      );
      try {
        for (const stmt of splitStatements(m.sql)) await conn.query(stmt);
      } catch (err) {
        await conn.query('UPDATE _prisma_migrations SET logs = ? WHERE id = ?', [String((err as Error).message), id]);
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`);
      }
      await conn.query('UPDATE _prisma_migrations SET finished_at = NOW(3), applied_steps_count = 1 WHERE id = ?', [id]);
      log(`applied migration ${m.name}`);
      result.applied.push(m.name);
    }
    await conn.query("SELECT RELEASE_LOCK(CONCAT(DATABASE(), '.migrate'))");
  } finally {
    await conn.end();
  }
  return result;
}

/** True when every migration on disk is recorded as applied. */
export async function pendingMigrations(pool: mariadb.Pool): Promise<string[]> {
  const rows: Array<{ migration_name: string }> = await pool.query(
    'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
  );
  const done = new Set(rows.map((r) => r.migration_name));
  return listMigrations()
    .map((m) => m.name)
    .filter((n) => !done.has(n));
}

if (require.main === module) {
  const url = process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/session_archive';
  migrate(url, (m) => console.log(m)).then(
    (r) => console.log(`${r.applied.length} applied, ${r.alreadyApplied.length} already applied`),
    (e) => {
      console.error(String(e.message ?? e));
      process.exit(1);
    },
  );
}
