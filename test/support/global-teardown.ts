import { stopTestMeili } from './meili-engine';
import { killAllTracked } from './processes';

export default async function globalTeardown(): Promise<void> {
  killAllTracked();
  await stopTestMeili();
}
