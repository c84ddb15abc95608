/**
 * MariaDB GTID positions (`@@gtid_binlog_pos`, `@@gtid_slave_pos`): a comma-separated list of
 * `domain-server-sequence`, one per replication domain. Within a domain, sequence numbers only
 * grow, so one position covers another when it is at least as far in every domain the other names.
 */
export type GtidPosition = ReadonlyMap<number, { server: number; seq: bigint }>;

const GTID = /^(\d{1,10})-(\d{1,10})-(\d{1,20})$/;

/** Parses a position; text that is not one gives null (an empty string is the empty position). */
export function parseGtidPosition(text: string | null | undefined): GtidPosition | null {
  const pos = new Map<number, { server: number; seq: bigint }>();
  const s = (text ?? '').trim();
  if (s === '') return pos;
  for (const part of s.split(',')) {
    const m = GTID.exec(part.trim());
    if (!m) return null;
    const domain = Number(m[1]);
    const seq = BigInt(m[3]);
    const seen = pos.get(domain);
    if (!seen || seen.seq < seq) pos.set(domain, { server: Number(m[2]), seq });
  }
  return pos;
}

export function formatGtidPosition(pos: GtidPosition): string {
  return [...pos.entries()]
    .sort(([a], [b]) => a - b)
    .map(([domain, { server, seq }]) => `${domain}-${server}-${seq}`)
    .join(',');
}

/** True when `at` has reached `target` in every domain `target` names. */
export function gtidCovers(at: GtidPosition, target: GtidPosition): boolean {
  for (const [domain, { seq }] of target) {
    const mine = at.get(domain);
    if (!mine || mine.seq < seq) return false;
  }
  return true;
}

/** The furthest of both in every domain. */
export function gtidMax(a: GtidPosition, b: GtidPosition): GtidPosition {
  const out = new Map(a);
  for (const [domain, g] of b) {
    const mine = out.get(domain);
    if (!mine || mine.seq < g.seq) out.set(domain, g);
  }
  return out;
}

export function gtidEquals(a: GtidPosition, b: GtidPosition): boolean {
  return gtidCovers(a, b) && gtidCovers(b, a);
}
