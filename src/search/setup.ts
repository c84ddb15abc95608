/**
 * The engines createSearch (index.ts) talks to, from the configuration: embedded (MEILI_URL unset:
 * one for the main index, one for the recent), one server (MEILI_URL, optionally MEILI_RECENT_URL
 * for the recent index), or several (MEILI_URLS), each with an optional standby
 * (MEILI_STANDBY_URLS). Every server takes MEILI_MASTER_KEY.
 */
import type { Config } from '../config';
import type { Logger } from '../logger';
import { MeiliConnection } from './engine/connection';
import { SearchEngine } from './engine/engines';
import { EmbeddedMeili } from './embedded/embedded';

/**
 * A search request to a primary that has a standby times out sooner than the usual 5 s, so that a
 * hung primary is failed over within 2 s.
 */
const FAILOVER_TIMEOUT_MS = 1_500;

interface EngineSetup {
  engines: SearchEngine[];
  embedded: EmbeddedMeili | null;
  recentEmbedded: EmbeddedMeili | null;
  /** Every distinct connection, primaries first. */
  conns: MeiliConnection[];
  /** True for the single-engine layouts (embedded, or MEILI_URL without a standby). */
  single: boolean;
}

export function setupEngines(config: Config, log: Logger): EngineSetup {
  const key = config.meiliMasterKey;
  const standbys = config.meiliStandbyUrls;
  if (config.meiliUrls.length === 0) {
    const embedded = new EmbeddedMeili({ dataDir: config.dataDir, logger: log, maxIndexingThreads: config.searchIndexingThreads ?? undefined });
    const recentEmbedded = new EmbeddedMeili({ dataDir: config.dataDir, name: 'meilisearch-recent', logger: log });
    const main = new MeiliConnection({ embedded }, log);
    const recent = new MeiliConnection({ embedded: recentEmbedded }, log);
    return { engines: [new SearchEngine(0, { main, recent }, null)], embedded, recentEmbedded, conns: [main, recent], single: true };
  }
  const engines = config.meiliUrls.map((url, i) => {
    const searchTimeoutMs = standbys[i] ? FAILOVER_TIMEOUT_MS : undefined;
    const main = new MeiliConnection({ url, key }, log, { searchTimeoutMs });
    // The recent index on a server of its own (MEILI_RECENT_URL, one engine only), else beside the main one.
    const recent = config.meiliRecentUrl
      ? new MeiliConnection({ url: config.meiliRecentUrl, key: config.meiliRecentMasterKey }, log, { searchTimeoutMs })
      : main;
    const standbyConn = standbys[i] ? new MeiliConnection({ url: standbys[i], key }, log) : null;
    return new SearchEngine(i, { main, recent }, standbyConn ? { main: standbyConn, recent: standbyConn } : null);
  });
  const conns = [...new Set(engines.flatMap((e) => e.conns()))];
  return { engines, embedded: null, recentEmbedded: null, conns, single: engines.length === 1 && !engines[0].standby };
}
