/**
 * "This request issued a secret": every credential or one-time link the service mints (API keys,
 * device tokens, device codes, reset links, browser sessions, and anything later built on
 * `randomToken`) calls `noteSecretIssued()` where it is minted. Code that must not keep a response
 * holding such a secret (the Idempotency-Key store) runs the request inside `trackIssuedSecrets`
 * and asks the tracker afterwards, so a new route that hands out a fresh secret cannot forget to
 * opt out: minting it is enough.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface IssuedSecrets {
  /** True once anything in the tracked work minted a secret. */
  issued: boolean;
}

const current = new AsyncLocalStorage<IssuedSecrets>();

/** Runs `fn` (and all the asynchronous work it starts) with `tracker` as its tracker. */
export function trackIssuedSecrets<T>(tracker: IssuedSecrets, fn: () => T): T {
  return current.run(tracker, fn);
}

/** Marks the work running now as having issued a secret (a no-op outside tracked work). */
export function noteSecretIssued(): void {
  const t = current.getStore();
  if (t) t.issued = true;
}
