import { invalid } from '../errors';

/** Lengths count Unicode code points (contract §9). */
export const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

export function hasLoneSurrogate(s: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function checkString(v: unknown, field: string, min: number, max: number): string {
  if (typeof v !== 'string') throw invalid(`Invalid type for ${field}: expected a string`);
  if (hasLoneSurrogate(v)) throw invalid(`Invalid value for ${field}: not valid Unicode text`);
  const n = codePoints(v);
  if (n < min || n > max) {
    throw invalid(
      min === max
        ? `Invalid value for ${field}: must be ${min} characters`
        : n < min && min === 1
          ? `Invalid value for ${field}: must not be empty`
          : `Invalid value for ${field}: must be ${min}-${max} characters`,
    );
  }
  return v;
}

export function optionalInt(body: Record<string, unknown>, field: string, min: number, max: number): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalid(`Invalid type for ${field}: expected an integer`);
  if (v < min || v > max) throw invalid(`Invalid value for ${field}: must be between ${min} and ${max}`);
  return v;
}

export function oneOf<T extends string>(v: unknown, field: string, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw invalid(`Invalid value for ${field}. Must be one of: ${allowed.join(', ')}`);
  }
  return v as T;
}

/** Parses an integer query parameter in [min, max]; absent → default; anything else → 400. */
export function intParam(raw: unknown, field: string, def: number, min: number, max: number): number {
  if (raw === undefined) return def;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) {
    throw invalid(`Invalid value for ${field}: must be an integer between ${min} and ${max}`);
  }
  const n = Number(raw);
  if (n < min || n > max) throw invalid(`Invalid value for ${field}: must be an integer between ${min} and ${max}`);
  return n;
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const PROJECT_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function parseIsoDate(v: unknown, field: string): Date {
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(v)) {
    throw invalid(`Invalid value for ${field}: expected an ISO 8601 timestamp`);
  }
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw invalid(`Invalid value for ${field}: expected an ISO 8601 timestamp`);
  return d;
}
