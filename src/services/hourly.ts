/**
 * Housekeeping that runs a minute after start and then every hour, on every instance that starts
 * it (the task takes a named lock when only one may work at a time). Its timers do not hold the
 * process open; a failure goes to `onError` and the next hour tries again; `stop()` ends it.
 */
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

export function hourly(task: () => Promise<unknown>, onError: (err: unknown) => void): { stop(): void } {
  const run = () => void task().catch(onError);
  const first = setTimeout(run, MINUTE_MS);
  const timer = setInterval(run, HOUR_MS);
  first.unref();
  timer.unref();
  return {
    stop() {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}
