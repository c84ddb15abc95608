import { migrate } from '../db/migrate';

/**
 * Migrations before a command, as the service applies them at start, and what came of them on
 * stderr: a database created because DATABASE_URL named one that did not exist (an admin who
 * mistyped it learns so from the first command), warnings, how many migrations were applied.
 */
export async function migrateForCli(databaseUrl: string): Promise<void> {
  const say = (msg: string) => process.stderr.write(`${msg.startsWith('warning:') ? '' : 'note: '}${msg}\n`);
  const r = await migrate(databaseUrl, (msg) => !msg.startsWith('applied migration ') && say(msg));
  if (r.applied.length) say(`applied ${r.applied.length} migration${r.applied.length === 1 ? '' : 's'} (the last: ${r.applied[r.applied.length - 1]})`);
}
