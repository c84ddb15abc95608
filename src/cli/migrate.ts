import { connectionOptions } from '../db/client';
import { createdDatabaseNote, migrate } from '../db/migrate';

/**
 * Migrations before a command, as the service applies them at start, and what came of them on
 * stderr: a database created because DATABASE_URL named one that did not exist (an admin who
 * mistyped it learns so from the first command), warnings, how many migrations were applied.
 */
export async function migrateForCli(databaseUrl: string): Promise<void> {
  const r = await migrate(databaseUrl);
  const say = (msg: string) => process.stderr.write(`${msg}\n`);
  if (r.createdDatabase) say(`note: ${createdDatabaseNote(connectionOptions(databaseUrl).database)}`);
  for (const w of r.warnings) say(`warning: ${w}`);
  if (r.applied.length) say(`note: applied ${r.applied.length} migration${r.applied.length === 1 ? '' : 's'} (the last: ${r.applied[r.applied.length - 1]})`);
}
