/** Runs once before all test files: nothing shared yet beyond checking the database answers. */
import * as mariadb from 'mariadb';

export default async function globalSetup(): Promise<void> {
  const conn = await mariadb.createConnection({ host: '127.0.0.1', port: 3306, user: 'root', connectTimeout: 5000 });
  await conn.end();
}
