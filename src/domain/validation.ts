/** A small shape check shared by the doors and the upload body; messages live with the schemas (./inputs.ts). */

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
