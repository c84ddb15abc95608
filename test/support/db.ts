import crypto from 'node:crypto';
import * as mariadb from 'mariadb';
import { migrate } from '../../src/db/migrate';

export const ROOT_URL = process.env.TEST_DATABASE_ROOT_URL ?? 'mysql://root@127.0.0.1:3306';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database for one test file (on `rootUrl`'s server: by default the run's). */
export async function createTestDatabase(prefix = 'sa_test', rootUrl = ROOT_URL): Promise<TestDatabase> {
  const db = uncreatedTestDatabase(prefix, rootUrl);
  await migrate(db.url);
  return db;
}

/** A database of the test's own not created yet (what it is given to create); drop() removes it if it was. */
export function uncreatedTestDatabase(prefix = 'sa_test', rootUrl = ROOT_URL): TestDatabase {
  const name = `${prefix}_${crypto.randomBytes(5).toString('hex')}`;
  const url = `${rootUrl}/${name}`;
  return {
    url,
    name,
    async drop() {
      const u = new URL(rootUrl);
      // The driver's 1 s connect timeout is a timer in this process: a test worker busy for a
      // second (two cores, a full run) fires it before reading the server's answer.
      const conn = await mariadb.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: u.username || 'root', connectTimeout: 10_000 });
      try {
        await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await conn.end();
      }
    },
  };
}
