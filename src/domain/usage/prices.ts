/**
 * The price table: USD per million tokens per model. One ships with the service (prices.json, its
 * source and date inside); PRICES_FILE replaces it. See docs/usage.md.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import shipped from './prices.json';

export interface ModelPrice {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface PriceTable {
  source: string | null;
  date: string | null;
  models: ReadonlyMap<string, ModelPrice>;
}

const usdPerMillion = z.number().finite().nonnegative();
const fileSchema = z.object({
  source: z.string().optional(),
  date: z.string().optional(),
  models: z.record(
    z.string().min(1).max(200),
    z.strictObject({ input: usdPerMillion, output: usdPerMillion, cacheRead: usdPerMillion, cacheWrite: usdPerMillion }),
  ),
});

/** A table from parsed JSON; throws an Error naming the first problems. */
export function priceTableOf(json: unknown): PriceTable {
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || 'the file'}: ${i.message}`);
    throw new Error(problems.join('; '));
  }
  const { source, date, models } = parsed.data;
  return Object.freeze({ source: source ?? null, date: date ?? null, models: new Map(Object.entries(models)) });
}

/** The table that ships with the service. */
export const SHIPPED_PRICES: PriceTable = priceTableOf(shipped);

/** The table in `file` (PRICES_FILE), or the shipped one; throws an Error saying what is wrong with the file. */
export function loadPriceTable(file: string | null): PriceTable {
  if (file === null) return SHIPPED_PRICES;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('is not JSON');
  }
  return priceTableOf(json);
}

// Names tried with these in front, as ccusage does ("sonnet-4-5" is "claude-sonnet-4-5").
const PREFIXES = ['anthropic/', 'claude-3-5-', 'claude-3-', 'claude-', 'openai/', 'azure/', 'openrouter/openai/'];
const FAST = '-fast';

const isWordChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9]/.test(c);

/**
 * The longest table name found inside `model` at word boundaries: a dated or provider-decorated
 * name ("claude-sonnet-4-5-20250929", "anthropic.claude-haiku-4-5-20251001-v1:0") takes the price of
 * the model it names. ccusage also matches the other way round (a table name containing the log's
 * name); that is a guess ("claude" would take some price), so it is not done here.
 */
function containedName(model: string, table: PriceTable): string | null {
  let best: string | null = null;
  for (const name of table.models.keys()) {
    if (best !== null && name.length <= best.length) continue;
    for (let at = model.indexOf(name); at !== -1; at = model.indexOf(name, at + 1)) {
      if (!isWordChar(model[at - 1]) && !isWordChar(model[at + name.length])) {
        best = name;
        break;
      }
    }
  }
  return best;
}

function resolve(model: string, table: PriceTable): string | null {
  if (table.models.has(model)) return model;
  for (const prefix of PREFIXES) if (table.models.has(prefix + model)) return prefix + model;
  return containedName(model, table);
}

/**
 * The price of `model` as named in a log, or null when the table has none (never a guess). A fast
 * variant (`<model>-fast`, as Claude Code's fast mode is recorded) takes the table's `-fast` entry of
 * the model it resolves to, and has no price without one.
 */
export function priceOf(model: string, table: PriceTable): ModelPrice | null {
  if (model.length === 0 || model.length > 200) return null;
  const exact = table.models.get(model);
  if (exact) return exact;
  if (model.endsWith(FAST)) {
    const base = resolve(model.slice(0, -FAST.length), table);
    return base === null ? null : (table.models.get(base + FAST) ?? null);
  }
  const name = resolve(model, table);
  return name === null ? null : (table.models.get(name) ?? null);
}

/** USD for the given tokens at `price`. */
export function costOf(tokens: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number }, price: ModelPrice): number {
  return (
    (tokens.inputTokens * price.input +
      tokens.outputTokens * price.output +
      tokens.cacheReadTokens * price.cacheRead +
      tokens.cacheWriteTokens * price.cacheWrite) /
    1_000_000
  );
}
