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

/** A committed change to one session, as live subscribers hear of it. */
export interface SessionChangeEvent {
  kind: 'CREATED' | 'UPDATED' | 'DELETED';
  /** The session's owner scope (its project owner: a user's id or a team's). */
  scope: string;
  projectId: string;
  sessionId: string;
  /** When it was committed (ms since the epoch). */
  at: number;
}

/** An announcement with a payload: the data layer emits, whoever listens (live subscriptions) acts. */
class Channel<T> {
  private readonly listeners = new Set<(value: T) => void>();

  /** Listens until the returned function is called. */
  on(fn: (value: T) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  readonly emit = (value: T): void => {
    for (const fn of this.listeners) {
      try {
        fn(value);
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
  /** A session was created, changed or deleted. */
  sessionChanged: Channel<SessionChangeEvent>;
  /** Webhook deliveries were written (webhook_deliveries). */
  webhooksWritten: Signal;
}

export const createSignals = (): DataSignals => ({ outboxWritten: new Signal(), sessionChanged: new Channel(), webhooksWritten: new Signal() });

/** Announces session changes once the transaction commits (nothing when it rolls back). */
export function announceSessionChanges(
  tx: { afterCommit(hook: () => void): void; signals: DataSignals },
  kind: SessionChangeEvent['kind'],
  scope: string,
  projectId: string,
  sessionIds: readonly string[],
): void {
  if (sessionIds.length === 0) return;
  tx.afterCommit(() => {
    const at = Date.now();
    for (const sessionId of sessionIds) tx.signals.sessionChanged.emit({ kind, scope, projectId, sessionId, at });
  });
}
