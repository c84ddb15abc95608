/**
 * The service's V8 heap setting (src/http/fast/heap.ts): applied at start unless the operator set their own.
 * What it does to collections and latency is measured in bench/ (docs/benchmarks.md), not here.
 */
import v8 from 'node:v8';
import { HEAP_GROWING_PERCENT, tuneHeap } from '../../src/http/fast/heap';

describe('tuneHeap', () => {
  let setFlags: jest.SpyInstance;
  beforeEach(() => {
    // Recorded, not applied: this jest worker's heap stays as it was.
    setFlags = jest.spyOn(v8, 'setFlagsFromString').mockImplementation(() => undefined);
  });
  afterEach(() => setFlags.mockRestore());

  it('sets the heap growing factor when node was started without one', () => {
    tuneHeap(['--enable-source-maps']);
    expect(setFlags).toHaveBeenCalledTimes(1);
    expect(setFlags).toHaveBeenCalledWith(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  });

  it.each([['--heap-growing-percent=300'], ['--heap_growing_percent=50']])('keeps the operator’s own %s', (flag) => {
    tuneHeap(['--enable-source-maps', flag]);
    expect(setFlags).not.toHaveBeenCalled();
  });
});
