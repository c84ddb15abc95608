import { Meilisearch } from 'meilisearch';
import type { Logger } from '../../logger';
import { createNodeHttpClient, isEngineUnreachable, type NodeHttpClient } from './http-client';

/** How long one search request may take before the engine counts as unavailable. */
const SEARCH_TIMEOUT_MS = 5_000;
/** Writes and task polling (large sessions take a while to index). */
const ADMIN_TIMEOUT_MS = 60_000;

/** Probes each engine once (a failure whose engine is not known: the probes tell which is down). */
export function probeAll(conns: Iterable<MeiliConnection>): void {
  for (const c of new Set(conns)) void c.checkHealth();
}

/** True when every engine answers a probe now. */
export async function allAnswer(conns: Iterable<MeiliConnection>): Promise<boolean> {
  return (await Promise.all([...new Set(conns)].map((c) => c.checkHealth()))).every(Boolean);
}

/** An engine whose address may change while it runs (the embedded one, after a restart). */
interface MovingEngine {
  readonly url: string | null;
  readonly masterKey: string;
}

type EngineTarget = { url: string; key: string | null } | { embedded: MovingEngine };

/**
 * The way to the engine: a configured server (MEILI_URL) or the embedded one, whose port may
 * change when it is restarted. Tracks health with a light probe and tells listeners when the
 * engine comes back, so that pending index work is retried at once.
 */
export class MeiliConnection {
  private readonly adminHttp: NodeHttpClient = createNodeHttpClient({ timeoutMs: ADMIN_TIMEOUT_MS });
  private readonly searchHttp: NodeHttpClient;
  private cached: { url: string; admin: Meilisearch; search: Meilisearch } | null = null;
  private healthy = false;
  private monitor: NodeJS.Timeout | null = null;
  private readonly upListeners = new Set<() => void>();
  private readonly downListeners = new Set<() => void>();

  /** `searchTimeoutMs`: shorter for an engine with a standby (a hung one fails over sooner). */
  constructor(
    private readonly target: EngineTarget,
    private readonly logger: Logger,
    opts: { searchTimeoutMs?: number } = {},
  ) {
    this.searchHttp = createNodeHttpClient({ timeoutMs: opts.searchTimeoutMs ?? SEARCH_TIMEOUT_MS });
  }

  get url(): string | null {
    return 'url' in this.target ? this.target.url : this.target.embedded.url;
  }

  private get key(): string | null {
    return 'url' in this.target ? this.target.key : this.target.embedded.masterKey;
  }

  private clients() {
    const url = this.url;
    if (!url) throw Object.assign(new Error('search engine not started'), { code: 'ECONNREFUSED' });
    if (this.cached?.url !== url) {
      const common = { host: url, apiKey: this.key ?? undefined };
      this.cached = {
        url,
        admin: new Meilisearch({ ...common, httpClient: this.adminHttp, defaultWaitOptions: { interval: 10, timeout: ADMIN_TIMEOUT_MS } }),
        search: new Meilisearch({ ...common, httpClient: this.searchHttp }),
      };
    }
    return this.cached;
  }

  /** Client for writes, settings and tasks. */
  admin(): Meilisearch {
    return this.clients().admin;
  }

  /** Client for searches (short timeout). */
  searcher(): Meilisearch {
    return this.clients().search;
  }

  /**
   * Adds documents given as the bytes of a JSON array, sent as they are (the client would want a
   * string: tens of MB turned into a string and back on the event loop). Returns the task uid.
   */
  async addDocumentsJson(indexUid: string, json: Uint8Array): Promise<number> {
    const url = new URL(`indexes/${encodeURIComponent(indexUid)}/documents`, this.clients().url.replace(/\/?$/, '/'));
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (this.key) headers.Authorization = `Bearer ${this.key}`;
    const body = Buffer.from(json.buffer, json.byteOffset, json.byteLength);
    const task = (await this.adminHttp(url, { method: 'POST', headers, body: body as unknown as RequestInit['body'] })) as { taskUid: number };
    return task.taskUid;
  }

  isHealthy(): boolean {
    return this.healthy;
  }

  onUp(fn: () => void): () => void {
    this.upListeners.add(fn);
    return () => this.upListeners.delete(fn);
  }

  onDown(fn: () => void): () => void {
    this.downListeners.add(fn);
    return () => this.downListeners.delete(fn);
  }

  /** Records the outcome of a request: a failure to reach the engine marks it down. */
  reportFailure(err: unknown): void {
    if (isEngineUnreachable(err)) this.setHealthy(false);
  }

  reportSuccess(): void {
    this.setHealthy(true);
  }

  private setHealthy(up: boolean): void {
    if (up === this.healthy) return;
    this.healthy = up;
    if (up) {
      this.logger.info({ msg: 'search engine available', url: this.url });
      for (const fn of this.upListeners) fn();
    } else {
      this.logger.warn({ msg: 'search engine unavailable', url: this.url });
      for (const fn of this.downListeners) fn();
    }
  }

  private checking: Promise<boolean> | null = null;

  /** Probes the engine (one probe at a time) and returns whether it answered. */
  checkHealth(): Promise<boolean> {
    if (this.checking) return this.checking;
    const p = this.probe().finally(() => {
      if (this.checking === p) this.checking = null;
    });
    this.checking = p;
    return p;
  }

  private async probe(): Promise<boolean> {
    try {
      await this.searcher().httpRequest.get({ path: 'health' });
      this.setHealthy(true);
    } catch (err) {
      this.setHealthy(false);
      if (!isEngineUnreachable(err)) this.logger.warn({ msg: 'search engine health check failed', err: String(err) });
    }
    return this.healthy;
  }

  startMonitor(intervalMs = 1000): void {
    if (this.monitor) return;
    this.monitor = setInterval(() => void this.checkHealth(), intervalMs);
    this.monitor.unref();
  }

  close(): void {
    if (this.monitor) clearInterval(this.monitor);
    this.monitor = null;
    this.cached = null;
    this.adminHttp.destroy();
    this.searchHttp.destroy();
  }
}
