/**
 * The engines of a configuration with several (MEILI_URLS) or with standbys (MEILI_STANDBY_URLS):
 * each position holds the owning scopes placed on it (placement.ts), on a primary and, when
 * configured, a standby fed from the same outbox. A configuration with one engine and no standby
 * is one position without a standby (the single-engine behaviour, unchanged).
 */
import type { MeiliConnection } from './connection';

/** The connections of one server: its main index's and its recent index's (one engine, or two with MEILI_RECENT_URL). */
interface EnginePair {
  main: MeiliConnection;
  recent: MeiliConnection;
}

/**
 * A standby's state: `in-sync` gets every batch the primary gets; `missed` lost a batch (it was
 * down or failed) and gets nothing until it is rebuilt; `rebuilding` has been emptied and gets
 * every batch again while the sessions of its scopes are queued for it (through the outbox).
 */
type StandbyState = 'in-sync' | 'missed' | 'rebuilding';

const pairConns = (p: EnginePair) => [...new Set([p.main, p.recent])];

export class SearchEngine {
  standbyState: StandbyState = 'in-sync';
  /** The primary's indexes are present with our settings (checked at start and after each outage): work may be written. */
  ready = false;

  constructor(
    /** Position in MEILI_URLS (placement weighs it). */
    readonly position: number,
    readonly primary: EnginePair,
    readonly standby: EnginePair | null,
  ) {}

  /** Primary answered its last request or probe. */
  primaryUp(): boolean {
    return pairConns(this.primary).every((c) => c.isHealthy());
  }

  standbyUp(): boolean {
    return this.standby !== null && pairConns(this.standby).every((c) => c.isHealthy());
  }

  /** Searches can be answered: by the primary, or by the standby. */
  serving(): boolean {
    return this.primaryUp() || this.standbyUp();
  }

  /** The primary failed a request: taken out of searches until a probe passes (the monitor's, every second). */
  primaryFailed(err: unknown): void {
    for (const c of pairConns(this.primary)) c.reportFailure(err);
  }

  primaryConns(): MeiliConnection[] {
    return pairConns(this.primary);
  }

  standbyConns(): MeiliConnection[] {
    return this.standby ? pairConns(this.standby) : [];
  }

  /** Every connection: primary first, then standby. */
  conns(): MeiliConnection[] {
    return [...this.primaryConns(), ...this.standbyConns()];
  }
}
