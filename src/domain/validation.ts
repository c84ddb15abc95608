import { invalid } from '../errors';
import { textProblem } from './text';

export { codePoints, hasLoneSurrogate } from './text';

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A string of `min`–`max` code points, with the messages of every input schema (src/services/inputs.ts). */
export function checkString(v: unknown, field: string, min: number, max: number): string {
  const problem = typeof v === 'string' ? textProblem(v, field, min, max) : `Invalid type for ${field}: expected a string`;
  if (problem) throw invalid(problem);
  return v as string;
}

export { SESSION_ID_RE as UUID_RE } from './session';
export { PROJECT_ID_RE } from './project';

export function parseIsoDate(v: unknown, field: string): Date {
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(v)) {
    throw invalid(`Invalid value for ${field}: expected an ISO 8601 timestamp`);
  }
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw invalid(`Invalid value for ${field}: expected an ISO 8601 timestamp`);
  return d;
}
