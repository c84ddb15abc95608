/**
 * Input fields whose zod schemas produce the contract's exact 400 messages (§4, §9), so one
 * schema both validates a request and describes it in the OpenAPI document. Lengths count
 * Unicode code points (as JSON Schema's minLength/maxLength do), not UTF-16 units.
 */
import { invalid } from '../../errors';
import { codePoints, hasLoneSurrogate } from '../../services/validation';
import { z } from './common';

const lengthMessage = (field: string, min: number, max: number, n: number) =>
  min === max
    ? `Invalid value for ${field}: must be ${min} characters`
    : n < min && min === 1
      ? `Invalid value for ${field}: must not be empty`
      : `Invalid value for ${field}: must be ${min}-${max} characters`;

/** A required string of `min`–`max` code points; null counts as missing. */
export function text(field: string, min: number, max: number) {
  return z
    .string({ error: (iss) => (iss.input == null ? `Missing required field: ${field}` : `Invalid type for ${field}: expected a string`) })
    .check((ctx) => {
      if (hasLoneSurrogate(ctx.value)) {
        ctx.issues.push({ code: 'custom', input: ctx.value, message: `Invalid value for ${field}: not valid Unicode text` });
        return;
      }
      const n = codePoints(ctx.value);
      if (n < min || n > max) ctx.issues.push({ code: 'custom', input: ctx.value, message: lengthMessage(field, min, max, n) });
    })
    .openapi({ minLength: min, maxLength: max });
}

/** An optional integer in [min, max]; null is the same as absent. */
export function optionalInteger(field: string, min: number, max: number) {
  const typeMessage = `Invalid type for ${field}: expected an integer`;
  return z
    .number({ error: typeMessage })
    .check((ctx) => {
      if (!Number.isInteger(ctx.value)) ctx.issues.push({ code: 'custom', input: ctx.value, message: typeMessage });
      else if (ctx.value < min || ctx.value > max) ctx.issues.push({ code: 'custom', input: ctx.value, message: `Invalid value for ${field}: must be between ${min} and ${max}` });
    })
    .nullish()
    .openapi({ type: ['integer', 'null'], minimum: min, maximum: max });
}

/** A JSON object body: anything else is `Request body must be a JSON object`. */
export const body = <S extends z.core.$ZodLooseShape>(shape: S) => z.object(shape, { error: 'Request body must be a JSON object' });

/** Parses `input` with `schema`; the first problem becomes the 400 (fields are checked in order). */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw invalid(r.error.issues[0]?.message ?? 'Invalid request');
}
