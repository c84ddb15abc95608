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
 * A standby's state (src/search/sync/standby.ts): `in-sync` has applied every row of the outbox;
 * `behind` has rows after its cursor to apply (it was slow, down or failing, and catches up from
 * its cursor); `rebuilding` has no valid cursor (new, older than what the outbox retains, or its
 * indexes were lost) and is rebuilt from the database.
 */
type StandbyState = 'in-sync' | 'behind' | 'rebuilding';

const pairConns = (p: EnginePair) => [...new Set([p.main, p.recent])];

export class SearchEngine {
  standbyState: StandbyState = 'behind';
  /** Seconds between the newest outbox row and the oldest one the standby has not applied (0: in sync). */
  standbyLagSeconds = 0;
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
