import crypto from 'node:crypto';
import * as mariadb from 'mariadb';
import { migrate } from '../../src/db/migrate';
import { testConnection } from './connection';

export const ROOT_URL = process.env.TEST_DATABASE_ROOT_URL ?? 'mysql://root@127.0.0.1:3306';

/** A root connection to `rootUrl`'s server, with no database chosen unless `database` is given. */
export function rootConnection(rootUrl = ROOT_URL, database?: string): Promise<mariadb.Connection> {
  const u = new URL(rootUrl);
  return testConnection({ host: u.hostname, port: Number(u.port || 3306), user: u.username || 'root', database });
}

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
      const conn = await rootConnection(rootUrl);
      try {
        await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await conn.end();
      }
    },
  };
}
