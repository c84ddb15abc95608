/**
 * Runs once before all test files: checks the database answers and starts one embedded
 * Meilisearch for the whole run (in this run's DATA_DIR under the OS temp dir, shared with the
 * test apps, which use that DATA_DIR). Its address and key reach the test workers through the environment.
 * With TEST_REPLICA=1 it also starts a private MariaDB primary and a replica of it (support/mariadb-pair.ts).
 */
import { testConnection } from './connection';
import { startMariadbPair, type MariadbPair } from './mariadb-pair';
import { startTestMeili, testDataDir } from './meili-engine';
import { startRunS3 } from './s3';

export default async function globalSetup(): Promise<void> {
  // Names this run's directory of child processes to sweep at the end (support/processes.ts).
  process.env.SA_TEST_RUN_ID = String(process.pid);
  // This run's DATA_DIR (the workers inherit its name; global teardown removes it).
  testDataDir();
  const conn = await testConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
  await conn.end();
  await startTestMeili();
  if (process.env.TEST_REPLICA === '1') {
    // The test matrix's replica mode: the run's databases live on a private primary with a
    // replica of it, and every test app reads through the replica (support/app.ts).
    const pair = await startMariadbPair();
    (globalThis as { saMariadbPair?: MariadbPair }).saMariadbPair = pair;
    process.env.TEST_DATABASE_ROOT_URL = pair.primary.rootUrl;
    process.env.TEST_REPLICA_URL = pair.replica.appUrl;
  }
  // TEST_CONTENT_STORE=s3: one s3rver for the run (support/s3.ts).
  await startRunS3();
}
