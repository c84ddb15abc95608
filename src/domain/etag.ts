/** Entity tags of sessions: what a tag covers, and how tags compare. Pure. */
import crypto from 'node:crypto';

/** A weak tag over everything a client can read of the session. */
export function sessionEtag(fields: {
  name: string;
  userTitle: string | null;
  startedAt: Date;
  endedAt: Date;
  metadata: Record<string, unknown>;
  contentDigest: string;
  /** Part of the tag only when something was found, so tags of clean sessions stay as they were. */
  redactionsJson?: string;
}): string {
  const meta = Object.fromEntries(Object.entries(fields.metadata).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const h = crypto
    .createHash('sha256')
    .update(
      JSON.stringify([
        fields.name,
        fields.userTitle,
        fields.startedAt.toISOString(),
        fields.endedAt.toISOString(),
        meta,
        fields.contentDigest,
        ...(fields.redactionsJson && fields.redactionsJson !== '[]' ? [fields.redactionsJson] : []),
      ]),
    )
    .digest('hex');
  return `W/"${h.slice(0, 40)}"`;
}

/** Weak comparison against an If-None-Match / If-Match list (`*` matches anything). */
export function etagMatches(header: string | undefined, etag: string | null): boolean {
  if (!header || !etag) return false;
  const opaque = (t: string) => t.trim().replace(/^W\//, '');
  const mine = opaque(etag);
  return header.split(',').some((t) => t.trim() === '*' || opaque(t) === mine);
}
