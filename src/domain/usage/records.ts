/**
 * Token counts from one parsed record of a raw agent log, in the shapes Claude Code, Codex CLI and
 * Gemini CLI write. Each reader returns what the record says, or nothing; none throws.
 */

export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** A usage entry; entries with the same key are one message written more than once. */
export interface UsageEntry extends TokenCounts {
  model: string;
  key: string | null;
  /** Claude Code's `usage.speed` was given (a later copy with it wins a tie, as in ccusage). */
  hasSpeed: boolean;
}

type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

// No request uses a trillion tokens: a larger count is hostile or broken, and the record is skipped.
const MAX_COUNT = 1e12;
const MAX_NAME = 200;

/** A token count: a non-negative integer; absent is 0, anything else is not a count (undefined). */
function count(v: unknown): number | undefined {
  if (v === undefined || v === null) return 0;
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_COUNT ? v : undefined;
}

const nameOf = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 && v.length <= MAX_NAME ? v : null);

export const totalOf = (t: TokenCounts) => t.inputTokens + t.outputTokens + t.cacheReadTokens + t.cacheWriteTokens;

/**
 * Claude Code: `message.usage` (input_tokens, output_tokens, cache_read_input_tokens,
 * cache_creation_input_tokens). As ccusage: any record with a usage whose input and output tokens
 * are numbers counts (sub-agent sidechains too); the key is the message id with the request id; the
 * model is `<model>-fast` when `usage.speed` is `fast`; `<synthetic>` messages (written by Claude
 * Code itself, no request) are left out.
 */
export function claudeEntry(record: Json): UsageEntry | null {
  const message = record.message;
  if (!isObject(message) || !isObject(message.usage)) return null;
  const u = message.usage;
  if (typeof u.input_tokens !== 'number' || typeof u.output_tokens !== 'number') return null;
  const inputTokens = count(u.input_tokens);
  const outputTokens = count(u.output_tokens);
  const cacheReadTokens = count(u.cache_read_input_tokens);
  const cacheWriteTokens = count(u.cache_creation_input_tokens);
  if (inputTokens === undefined || outputTokens === undefined || cacheReadTokens === undefined || cacheWriteTokens === undefined) return null;
  const base = nameOf(message.model);
  if (base === '<synthetic>') return null;
  const model = base === null ? 'unknown' : u.speed === 'fast' ? `${base}-fast` : base;
  const id = nameOf(message.id);
  const requestId = nameOf(record.requestId);
  const key = id === null ? null : requestId === null ? `claude:${id}` : `claude:${id}:${requestId}`;
  return { model, key, hasSpeed: u.speed !== undefined, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens };
}

/** Input that includes its cached part (OpenAI and Google count it so): the cached part is a cache read. */
function splitCached(input: number, cached: number, output: number): TokenCounts {
  const cacheReadTokens = Math.min(cached, input);
  return { inputTokens: input - cacheReadTokens, outputTokens: output, cacheReadTokens, cacheWriteTokens: 0 };
}

/** Codex's usage object (input_tokens includes cached_input_tokens; output_tokens includes reasoning). */
function codexCounts(u: unknown): TokenCounts | null {
  if (!isObject(u)) return null;
  const input = count(u.input_tokens);
  const cached = count(u.cached_input_tokens);
  const output = count(u.output_tokens);
  if (input === undefined || cached === undefined || output === undefined) return null;
  return splitCached(input, cached, output);
}

const minus = (a: TokenCounts, b: TokenCounts): TokenCounts => ({
  inputTokens: a.inputTokens - b.inputTokens,
  outputTokens: a.outputTokens - b.outputTokens,
  cacheReadTokens: a.cacheReadTokens - b.cacheReadTokens,
  cacheWriteTokens: a.cacheWriteTokens - b.cacheWriteTokens,
});

/**
 * Codex CLI: the model comes from `turn_context` records; `token_count` events carry the running
 * total (`info.total_token_usage`) and the last turn's (`info.last_token_usage`). The total is
 * followed by differences, so an event written twice adds nothing; when the total goes down (a
 * restarted count) or is absent, the last turn's counts are added.
 */
export class CodexReader {
  private model = 'unknown';
  private total: TokenCounts | null = null;

  entry(record: Json): UsageEntry | null {
    const payload = isObject(record.payload) ? record.payload : record;
    if (record.type === 'turn_context' || payload.type === 'turn_context') {
      this.model = nameOf(payload.model) ?? this.model;
      return null;
    }
    if (payload.type !== 'token_count' || !isObject(payload.info)) return null;
    const info = payload.info;
    this.model = nameOf(info.model) ?? this.model;
    const total = codexCounts(info.total_token_usage);
    const last = codexCounts(info.last_token_usage);
    let counts: TokenCounts | null = last;
    if (total) {
      const delta = this.total ? minus(total, this.total) : total;
      const restarted = Object.values(delta).some((n) => n < 0);
      this.total = total;
      counts = restarted ? (last ?? total) : delta;
    }
    if (!counts || totalOf(counts) === 0) return null;
    return { model: this.model, key: null, hasSpeed: false, ...counts };
  }
}

/**
 * Gemini: a Gemini CLI message's `tokens` (input, output, cached, thoughts, tool) or an API
 * response's `usageMetadata` (promptTokenCount, candidatesTokenCount, cachedContentTokenCount,
 * thoughtsTokenCount, toolUsePromptTokenCount). The prompt count includes the cached part;
 * thoughts are billed as output and tool-use prompts as input. Keyed by the message id.
 */
export function geminiEntry(record: Json): UsageEntry | null {
  let input, output, cached, thoughts, tool;
  if (isObject(record.tokens) && (record.type === 'gemini' || record.type === undefined)) {
    const t = record.tokens;
    [input, output, cached, thoughts, tool] = [count(t.input), count(t.output), count(t.cached), count(t.thoughts), count(t.tool)];
  } else {
    const m = isObject(record.usageMetadata) ? record.usageMetadata : isObject(record.response) ? record.response.usageMetadata : null;
    if (!isObject(m)) return null;
    input = count(m.promptTokenCount);
    output = count(m.candidatesTokenCount);
    cached = count(m.cachedContentTokenCount);
    thoughts = count(m.thoughtsTokenCount);
    tool = count(m.toolUsePromptTokenCount);
  }
  if (input === undefined || output === undefined || cached === undefined || thoughts === undefined || tool === undefined) return null;
  const counts = splitCached(input, cached, output + thoughts);
  counts.inputTokens += tool;
  if (totalOf(counts) === 0) return null;
  const response = isObject(record.response) ? record.response : {};
  const model = nameOf(record.model) ?? nameOf(record.modelVersion) ?? nameOf(response.modelVersion) ?? 'unknown';
  const id = nameOf(record.id);
  return { model, key: id === null ? null : `gemini:${id}`, hasSpeed: false, ...counts };
}
