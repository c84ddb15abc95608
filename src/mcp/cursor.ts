/**
 * Cursors of the MCP tools: opaque to the agent, signed (HMAC-SHA256 with a key derived from the
 * service's JWT secret) and bound to the caller, the tool and the filters the first page was
 * asked with. A cursor altered, sent to another tool or reused with other filters is refused
 * (the tool answers an error result) instead of silently paging through something else.
 */
import crypto from 'node:crypto';

export class CursorError extends Error {}

const keyOf = (secret: string) => crypto.createHmac('sha256', secret).update('session-archive mcp cursor').digest();

/** A stable digest of a tool's filters (keys sorted, absent and empty lists alike). */
function filterDigest(filters: Record<string, unknown>): string {
  const norm = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.length ? [...(v as unknown[])].map(String).sort() : undefined;
    if (v === '' || v === null) return undefined;
    return v;
  };
  const entries = Object.keys(filters)
    .sort()
    .map((k) => [k, norm(filters[k])] as const)
    .filter(([, v]) => v !== undefined);
  return crypto.createHash('sha256').update(JSON.stringify(entries)).digest('base64url').slice(0, 16);
}

export interface CursorScope {
  secret: string;
  userId: string;
  tool: string;
  filters: Record<string, unknown>;
}

function mac(scope: CursorScope, body: string): string {
  return crypto
    .createHmac('sha256', keyOf(scope.secret))
    .update(`${scope.userId}\0${scope.tool}\0${filterDigest(scope.filters)}\0${body}`)
    .digest('base64url')
    .slice(0, 22);
}

/** Seals `position` (any JSON value) into a cursor valid only for this scope. */
export function sealCursor(scope: CursorScope, position: unknown): string {
  const body = Buffer.from(JSON.stringify(position)).toString('base64url');
  return `${body}.${mac(scope, body)}`;
}

/** The position sealed in `cursor`, or CursorError when it was not made for this scope. */
export function openCursor(scope: CursorScope, cursor: string): unknown {
  const dot = cursor.indexOf('.');
  const body = dot > 0 ? cursor.slice(0, dot) : '';
  const given = Buffer.from(cursor.slice(dot + 1));
  const expected = Buffer.from(mac(scope, body));
  if (dot <= 0 || given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
    throw new CursorError('Invalid cursor: it was made for another query or filters; ask again without a cursor');
  }
  return JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
}
