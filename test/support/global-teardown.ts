import { stopTestMeili } from './meili-engine';

export default async function globalTeardown(): Promise<void> {
  await stopTestMeili();
}
