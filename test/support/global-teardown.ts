import { stopTestMeili } from './meili-engine';
import type { MariadbPair } from './mariadb-pair';
import { killAllTracked } from './processes';
import { stopRunS3 } from './s3';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { saMariadbPair?: MariadbPair }).saMariadbPair?.close();
  killAllTracked();
  await stopTestMeili();
  await stopRunS3();
}
