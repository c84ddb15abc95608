/** Waiting in tests for what happens off a request's path (an index write, a recorded use). */

/**
 * Resolves once `check` holds, polling with a backoff from 10 ms to 200 ms; throws after
 * `timeoutMs`, naming `what` was awaited.
 */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 200);
  }
}
