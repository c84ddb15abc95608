/**
 * How long searches take, for whoever listens (src/metrics.ts turns it into
 * `search_duration_seconds`). Search code records; it does not know about metrics.
 */
type Listener = (seconds: number) => void;
const listeners = new Set<Listener>();

export function recordSearch(seconds: number): void {
  for (const l of listeners) l(seconds);
}

/** Returns the function that stops listening. */
export function onSearch(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
