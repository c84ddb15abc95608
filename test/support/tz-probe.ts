/**
 * Run as a child process with a non-UTC TZ: creates a key that expired an hour ago and one that
 * expires in an hour, and prints whether each authenticates.
 */
import { authenticate } from '../../src/services/authenticate';
import { createDb } from '../../src/db/client';
import { signKeyToken } from '../../src/domain/tokens';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

async function main() {
  const db = createDb(process.env.DATABASE_URL!);
  const secret = 'tz-probe-secret-long-enough';
  const u = await createUser(operatorCtx(db), `tz-${Date.now()}@example.test`);
  const result: Record<string, boolean> = {};
  for (const [label, offsetMs] of [
    ['expiredAnHourAgo', -3_600_000],
    ['expiresInAnHour', 3_600_000],
  ] as const) {
    const expiresAt = new Date(Date.now() + offsetMs);
    const id = `${label}-${Date.now()}`;
    await db.prisma.apiKey.create({ data: { id, userId: u.id, name: label, expiresAt } });
    const token = signKeyToken(secret, u.id, id, null);
    result[label] = (await authenticate(db.reads, secret, `Bearer ${token}`)) !== null;
  }
  console.log(JSON.stringify(result));
  await db.close();
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
