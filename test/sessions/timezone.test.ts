import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '../support/db';

// Key expiry must not depend on the machine's time zone (the driver converts DATETIME with the
// process zone, Prisma with UTC). Each zone runs in its own process, since TZ is per process.
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

test.each(['Asia/Tokyo', 'America/New_York'])('key expiry is exact when the process runs in %s', (tz) => {
  const out = execFileSync(process.execPath, [path.join('node_modules', 'tsx', 'dist', 'cli.mjs'), 'test/support/tz-probe.ts'], {
    env: { ...process.env, TZ: tz, DATABASE_URL: db.url },
    encoding: 'utf8',
  });
  expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ expiredAnHourAgo: false, expiresInAnHour: true });
});
