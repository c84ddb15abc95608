/**
 * The migration records (table `_prisma_migrations`, kept exactly as `prisma migrate deploy` keeps
 * it, so either tool can take over from the other) and the database itself. The runner that reads
 * prisma/migrations and applies the files is src/db/migrate.ts.
 */
import type { Sql } from './sql';

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

interface MigrationRecord {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/** Creates the named database when it does not exist yet (on a connection without a database); true when it did. */
export async function createDatabaseIfMissing(db: Sql, name: string): Promise<boolean> {
  return (await db.execute(`CREATE DATABASE IF NOT EXISTS \`${name.replace(/`/g, '``')}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`)) > 0;
}

/** Takes the database's migration lock (one migrator at a time, across processes); false when it stayed taken for 60 s. */
export async function takeMigrationLock(db: Sql): Promise<boolean> {
  const [{ got }] = await db.query<{ got: unknown }>("SELECT GET_LOCK(CONCAT(DATABASE(), '.migrate'), 60) AS got");
  return Number(got) === 1;
}

export async function releaseMigrationLock(db: Sql): Promise<void> {
  await db.query("SELECT RELEASE_LOCK(CONCAT(DATABASE(), '.migrate'))");
}

export async function createMigrationsTable(db: Sql): Promise<void> {
  await db.execute(CREATE_TABLE);
}

export function migrationRecords(db: Sql): Promise<MigrationRecord[]> {
  return db.query<MigrationRecord>('SELECT migration_name, checksum, finished_at, rolled_back_at FROM _prisma_migrations');
}

/** Names of the migrations applied (finished, not rolled back). */
export async function appliedMigrationNames(db: Sql): Promise<Set<string>> {
  const rows = await db.query<{ migration_name: string }>(
    'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
  );
  return new Set(rows.map((r) => r.migration_name));
}

export async function recordMigrationStarted(db: Sql, id: string, name: string, checksum: string): Promise<void> {
  await db.execute(
    'INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, NOW(3), 0)',
    id,
    checksum,
    name,
  );
}

export async function recordMigrationFailed(db: Sql, id: string, message: string): Promise<void> {
  await db.execute('UPDATE _prisma_migrations SET logs = ? WHERE id = ?', message, id);
}

export async function recordMigrationFinished(db: Sql, id: string): Promise<void> {
  await db.execute('UPDATE _prisma_migrations SET finished_at = NOW(3), applied_steps_count = 1 WHERE id = ?', id);
}
