/**
 * The building blocks of every input schema and the one translation of a
 * schema's first problem into the documented 400 message. Plain zod, no I/O and no OpenAPI
 * extension (a block's description rides on zod's own `.meta()`, which the OpenAPI generator
 * reads), so that src/domain/upload.ts can use them on worker threads. src/services/inputs.ts
 * builds the front doors' schemas from these. Lengths count Unicode code points (as JSON
 * Schema's minLength/maxLength do), not UTF-16 units.
 */
import { z } from 'zod';
import { invalid } from '../errors';
import { hasLoneSurrogate, textProblem } from './text';

/** Parses `input` with `schema`; the first problem (in the order the schema lists fields) becomes the 400. */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw invalid(r.error.issues[0]?.message ?? 'Invalid request');
}

const missingOrType = (field: string, nullIsMissing: boolean) => (iss: { input: unknown }) =>
  iss.input === undefined || (iss.input === null && nullIsMissing) ? `Missing required field: ${field}` : `Invalid type for ${field}: expected a string`;

/**
 * A string of `min`–`max` code points. `null: 'missing'` (a required field): null reads as
 * missing; `null: 'type'` (an optional field that cannot be cleared): null is the wrong type.
 */
export function text(field: string, min: number, max: number, opts: { null: 'missing' | 'type' } = { null: 'missing' }) {
  return z
    .string({ error: missingOrType(field, opts.null === 'missing') })
    .check((ctx) => {
      const problem = textProblem(ctx.value, field, min, max);
      if (problem) ctx.issues.push({ code: 'custom', input: ctx.value, message: problem });
    })
    .meta({ minLength: min, maxLength: max });
}

/**
 * A list of at most `maxItems` strings of `min`–`max` code points each; absent or null → [].
 * `label` names the field in messages (an item is `label[i]`).
 */
export function textList(label: string, maxItems: number, min: number, max: number) {
  return z
    .array(z.unknown(), { error: `Invalid type for ${label}: expected an array of strings` })
    .check((ctx) => {
      if (ctx.value.length > maxItems) {
        ctx.issues.push({ code: 'custom', input: ctx.value, message: `Invalid value for ${label}: at most ${maxItems} items` });
        return;
      }
      for (let i = 0; i < ctx.value.length; i++) {
        const v = ctx.value[i];
        const problem = typeof v === 'string' ? textProblem(v, `${label}[${i}]`, min, max) : `Invalid type for ${label}[${i}]: expected a string`;
        if (problem) {
          ctx.issues.push({ code: 'custom', input: ctx.value, message: problem });
          return;
        }
      }
    })
    .transform((v) => v as string[])
    .nullish()
    .transform((v) => v ?? [])
    .meta({ type: ['array', 'null'], items: { type: 'string', minLength: min, maxLength: max }, maxItems });
}

/** A JSON object body: anything else is `Request body must be a JSON object`. Unknown fields are ignored. */
export const body = <S extends z.core.$ZodLooseShape>(shape: S) => z.object(shape, { error: 'Request body must be a JSON object' });

/** An ISO 8601 timestamp (`YYYY-MM-DDT…`) that names a real instant, as a Date. */
export function timestamp(field: string) {
  const message = `Invalid value for ${field}: expected an ISO 8601 timestamp`;
  return z
    .string({ error: message })
    .check((ctx) => {
      if (!/^\d{4}-\d{2}-\d{2}T/.test(ctx.value) || Number.isNaN(new Date(ctx.value).getTime())) ctx.issues.push({ code: 'custom', input: ctx.value, message });
    })
    .transform((v) => new Date(v));
}

/**
 * Session content (markdown, raw data, session data): any length, valid Unicode (JSON can carry
 * a lone surrogate, UTF-8 cannot). Required content must not be empty; null reads as missing.
 * Not counted in code points: a 50 MiB body is walked once, by the surrogate check.
 */
export function content(field: string, required: boolean) {
  return z.string({ error: missingOrType(field, true) }).check((ctx) => {
    if (required && ctx.value.length === 0) ctx.issues.push({ code: 'custom', input: ctx.value, message: `Invalid value for ${field}: must not be empty` });
    else if (hasLoneSurrogate(ctx.value)) {
      ctx.issues.push({ code: 'custom', input: ctx.value, message: `Invalid value for ${field}: not valid Unicode text` });
    }
  });
}

export const choiceMessage = (field: string, allowed: readonly string[]) => `Invalid value for ${field}. Must be one of: ${allowed.join(', ')}`;

/** One of `allowed` (case-sensitive). */
export function choice<const T extends readonly [string, ...string[]]>(field: string, allowed: T) {
  return z.enum(allowed, { error: choiceMessage(field, allowed) });
}
