/** A wake-up call without payload: the data layer emits, whoever listens (the search worker) acts. */
class Signal {
  private readonly listeners = new Set<() => void>();

  /** Listens until the returned function is called. */
  on(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  readonly emit = (): void => {
    for (const fn of this.listeners) {
      try {
        fn();
      } catch {
        // A listener's failure is its own; the write it hears of has committed.
      }
    }
  };
}

/** What writes through the data layer announce once committed. */
export interface DataSignals {
  /** Index work was written to search_outbox. */
  outboxWritten: Signal;
}

export const createSignals = (): DataSignals => ({ outboxWritten: new Signal() });
