/**
 * What a key may do: `["read"]` (a read-only key, for agents: every write is refused with 403
 * `This key is read-only`) or `["read", "write"]` (the default, and what device tokens and browser
 * sessions always have). Stored as the comma-joined list.
 */
export type KeyScope = 'read' | 'write';
export const KEY_SCOPES = ['read', 'write'] as const;
const FULL_SCOPES: KeyScope[] = ['read', 'write'];
export const READ_ONLY_MESSAGE = 'This key is read-only';

/** The stored form. Unknown words are dropped; "read" is always there. */
export function parseScopes(stored: string | null | undefined): KeyScope[] {
  if (stored == null || stored === 'read,write') return [...FULL_SCOPES];
  if (stored === 'read') return ['read'];
  const words = new Set(stored.split(',').map((w) => w.trim()));
  return words.has('write') ? ['read', 'write'] : ['read'];
}

export const storeScopes = (scopes: readonly KeyScope[]): string => (scopes.includes('write') ? 'read,write' : 'read');
