import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full collection kept before it
 * starts the next one: (1 + HEAP_GROWING_PERCENT / 100) times, instead of V8's own factor.
 *
 * Why: the service keeps little alive (~30 MB) and makes short-lived garbage on every request.
 * V8 (Node 24) sizes the young generation from the machine's memory (two 32 MB semi-spaces on a
 * 24 GB machine) and, when a heap is this small and its collections this fast, grows the old
 * generation by the least it can (a factor of 1.1, plus a fixed step). As V8's traces read, the
 * room left (~40 MB) then stays below the young generation's size, which V8 takes as its signal
 * to start marking the whole heap: a full mark-compact every ~14 MB allocated (every ~300 ms of
 * back-to-back searches), 5-15 ms each, with no young-generation collection in between.
 * Measured in BENCHMARKS.md ("Full collections in a small heap"): 59-103 full collections in 5
 * of 6 search runs (7 in the other), 9-12 in each with a fixed factor of 2 (and a young
 * collection every ~0.7 s, 5-9 ms); under REST load the process collects for about as long as
 * without it.
 *
 * A fixed factor of 2 costs at most the live heap once more in memory. An operator's own
 * `--heap-growing-percent` on the node command line is kept.
 */
export const HEAP_GROWING_PERCENT = 100;

/** Applies HEAP_GROWING_PERCENT to this process (read by V8 at each full collection). */
export function tuneHeap(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((a) => a.startsWith('--heap-growing-percent') || a.startsWith('--heap_growing_percent'))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
