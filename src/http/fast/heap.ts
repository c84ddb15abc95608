import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full collection kept before it
 * starts the next one: (1 + HEAP_GROWING_PERCENT / 100) times, instead of V8's own factor. Left to
 * itself, V8 gives a heap this small (~30 MB live) the least growth it can, and then marks the
 * whole heap every ~14 MB allocated: back-to-back full collections whose pauses made the slow tail
 * of search latency. What the setting costs and changes is in docs/operations.md ("Memory: the V8
 * heap"), the measurement in docs/benchmarks.md. An operator's own `--heap-growing-percent` on the
 * node command line is kept; FAST_PATHS=off leaves V8's factor alone (src/main.ts).
 */
export const HEAP_GROWING_PERCENT = 100;

/** Applies HEAP_GROWING_PERCENT to this process (read by V8 at each full collection). */
export function tuneHeap(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((a) => a.startsWith('--heap-growing-percent') || a.startsWith('--heap_growing_percent'))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
