/** Small shape checks shared by the doors and the upload body; messages live with the schemas (./inputs.ts). */

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export { SESSION_ID_RE as UUID_RE } from './session';
export { PROJECT_ID_RE } from './project';
