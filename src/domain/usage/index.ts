/**
 * What a session cost: token usage read from a raw agent log (Claude Code, Codex CLI, Gemini CLI),
 * totalled per model and priced from a price table. Line by line, one line held at a time; a line
 * that is not JSON or not a usage record is skipped; nothing thrown for any input. See docs/usage.md.
 */
import { StringDecoder } from 'node:string_decoder';
import { costOf, priceOf, type PriceTable } from './prices';
import { claudeEntry, CodexReader, geminiEntry, isObject, totalOf, type TokenCounts, type UsageEntry } from './records';

export { loadPriceTable, priceOf, SHIPPED_PRICES, type ModelPrice, type PriceTable } from './prices';
export type { TokenCounts } from './records';

interface ModelUsage extends TokenCounts {
  model: string;
  /** null: the price table has no price for this model. */
  costUsd: number | null;
}

export interface SessionUsage {
  byModel: ModelUsage[];
  totalTokens: number;
  /** null when some model has no price (a total leaving it out would be wrong). */
  costUsd: number | null;
}

interface UsageReaderOptions {
  /** A longer line is skipped without being held (default 64 MiB, above the upload limit's default). */
  maxLineChars?: number;
  /** Distinct models kept apart; more are counted together as OTHER_MODELS, unpriced (default 100). */
  maxModels?: number;
}

const OTHER_MODELS = '(other models)';

// Only lines with one of these can hold usage; the others are not parsed.
const MARKERS = ['"usage"', 'token_count', 'turn_context', '"tokens"', 'usageMetadata'];

const zero = (): TokenCounts => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });

function add(into: TokenCounts, t: TokenCounts): void {
  into.inputTokens += t.inputTokens;
  into.outputTokens += t.outputTokens;
  into.cacheReadTokens += t.cacheReadTokens;
  into.cacheWriteTokens += t.cacheWriteTokens;
}

/**
 * As ccusage: of entries with the same key (message id and request id), the one with more tokens
 * counts; on a tie, a later one that gives `usage.speed` replaces one that does not.
 */
const replaces = (next: UsageEntry, kept: UsageEntry) => (totalOf(next) === totalOf(kept) ? next.hasSpeed && !kept.hasSpeed : totalOf(next) > totalOf(kept));

/** Reads a raw log pushed in chunks of any size; `result()` totals what was read. */
export class UsageReader {
  private readonly decoder = new StringDecoder('utf8');
  private readonly codex = new CodexReader();
  private readonly keyed = new Map<string, UsageEntry>();
  private readonly unkeyed = new Map<string, TokenCounts>();
  private readonly maxLineChars: number;
  private readonly maxModels: number;
  private partial = '';
  private skipping = false;

  constructor(
    private readonly prices: PriceTable,
    options: UsageReaderOptions = {},
  ) {
    this.maxLineChars = options.maxLineChars ?? 64 * 1024 * 1024;
    this.maxModels = options.maxModels ?? 100;
  }

  push(chunk: string | Uint8Array): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      if (!this.skipping && this.partial.length + nl - start <= this.maxLineChars) this.line(this.partial + text.slice(start, nl));
      this.partial = '';
      this.skipping = false;
      start = nl + 1;
    }
    if (this.skipping) return;
    if (this.partial.length + text.length - start > this.maxLineChars) {
      this.partial = '';
      this.skipping = true;
    } else {
      this.partial += text.slice(start);
    }
  }

  /** Per-model totals of everything pushed (the last line need not end in a newline); null: no usage in the log. */
  result(): SessionUsage | null {
    const rest = this.partial + this.decoder.end();
    if (!this.skipping && rest.length <= this.maxLineChars) this.line(rest);
    this.partial = '';
    const totals = new Map<string, TokenCounts>();
    const addTo = (model: string, t: TokenCounts) => {
      const name = totals.has(model) || totals.size < this.maxModels ? model : OTHER_MODELS;
      const into = totals.get(name) ?? zero();
      add(into, t);
      totals.set(name, into);
    };
    for (const [model, t] of this.unkeyed) addTo(model, t);
    for (const entry of this.keyed.values()) addTo(entry.model, entry);
    if (totals.size === 0) return null;
    const byModel = [...totals]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([model, t]): ModelUsage => {
        const price = model === OTHER_MODELS ? null : priceOf(model, this.prices);
        return { model, ...t, costUsd: price ? costOf(t, price) : null };
      });
    const costs = byModel.map((m) => m.costUsd);
    return {
      byModel,
      totalTokens: byModel.reduce((sum, m) => sum + totalOf(m), 0),
      costUsd: costs.includes(null) ? null : (costs as number[]).reduce((sum, c) => sum + c, 0),
    };
  }

  private line(line: string): void {
    if (!MARKERS.some((m) => line.includes(m))) return;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      return;
    }
    if (!isObject(record)) return;
    // A Gemini CLI session file is one JSON object with its messages in an array.
    if (Array.isArray(record.messages)) {
      for (const message of record.messages) if (isObject(message)) this.take(geminiEntry(message));
      return;
    }
    this.take(claudeEntry(record) ?? this.codex.entry(record) ?? geminiEntry(record));
  }

  private take(entry: UsageEntry | null): void {
    if (!entry) return;
    if (entry.key === null) {
      const into = this.unkeyed.get(entry.model) ?? zero();
      add(into, entry);
      this.unkeyed.set(entry.model, into);
      return;
    }
    const kept = this.keyed.get(entry.key);
    if (!kept || replaces(entry, kept)) this.keyed.set(entry.key, entry);
  }
}

/** Usage in a whole raw log (a string, bytes, or chunks of either, e.g. a file stream). */
export async function readUsage(
  log: string | Uint8Array | AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
  prices: PriceTable,
  options?: UsageReaderOptions,
): Promise<SessionUsage | null> {
  const reader = new UsageReader(prices, options);
  if (typeof log === 'string' || log instanceof Uint8Array) reader.push(log);
  else for await (const chunk of log) reader.push(chunk);
  return reader.result();
}
