/** Checks of settings that span several variables (src/config.ts runs them; every problem is listed). */
import net from 'node:net';
import { z } from 'zod';
import { loadPriceTable, type PriceTable } from './domain/usage/prices';

/** A comma-separated list of http(s) URLs, at least one, none twice. */
export const urlListOf = (name: string) =>
  z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((u) => u.trim())
        .filter(Boolean),
    )
    .refine(
      (us) => us.length > 0 && us.every((u) => /^https?:$/.test(URL.canParse(u) ? new URL(u).protocol : '')),
      `${name} must be comma-separated URLs (http or https)`,
    )
    .refine((us) => new Set(us).size === us.length, `${name} names an engine twice`);

/**
 * MEILI_STANDBY_URLS: one entry per engine, in the same order; an empty entry is an engine without
 * a standby (`http://s0:7700,` : a standby for the first of two engines only).
 */
export const standbyListOf = (name: string) =>
  z
    .string()
    .transform((v) => v.split(',').map((u) => u.trim()))
    .refine(
      (us) => us.some(Boolean) && us.every((u) => u === '' || /^https?:$/.test(URL.canParse(u) ? new URL(u).protocol : '')),
      `${name} must be comma-separated URLs (http or https; an empty entry for an engine without a standby)`,
    );

/** Engines: MEILI_URL or MEILI_URLS (not both), standbys one per engine, the recent engine only with MEILI_URL. */
export function meiliProblems(given: Record<string, string | undefined>, e: { MEILI_URLS?: string[]; MEILI_STANDBY_URLS?: string[] } | null): string[] {
  const problems: string[] = [];
  if (given.MEILI_URL && given.MEILI_URLS) problems.push('MEILI_URL and MEILI_URLS are exclusive: MEILI_URL for one engine, MEILI_URLS for several');
  if (given.MEILI_RECENT_URL && !given.MEILI_URL) {
    problems.push(
      given.MEILI_URLS
        ? "MEILI_RECENT_URL goes with MEILI_URL only (with MEILI_URLS each engine holds its scopes' recent index)"
        : 'MEILI_RECENT_URL needs MEILI_URL (without MEILI_URL both engines are embedded)',
    );
  }
  if (given.MEILI_STANDBY_URLS && !given.MEILI_URL && !given.MEILI_URLS)
    problems.push('MEILI_STANDBY_URLS needs MEILI_URL or MEILI_URLS (the engines they stand by for)');
  const engines = e?.MEILI_URLS?.length ?? (given.MEILI_URL ? 1 : 0);
  const standbys = e?.MEILI_STANDBY_URLS ?? [];
  if (engines > 0 && standbys.length > 0 && standbys.length !== engines) {
    problems.push(`MEILI_STANDBY_URLS must name one standby per engine, in the same order (${engines} engine(s), ${standbys.length} standby(s))`);
  }
  const both = [...(e?.MEILI_URLS ?? (given.MEILI_URL ? [given.MEILI_URL] : [])), ...standbys.filter(Boolean)];
  if (new Set(both).size !== both.length) problems.push('MEILI_STANDBY_URLS must name other servers than the engines, each once');
  return problems;
}

/** The S3 content store: a bucket for CONTENT_STORE=s3 and for any other S3_* setting; both keys or neither. */
export function s3Problems(given: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  if (given.CONTENT_STORE === 's3' && !given.S3_BUCKET) problems.push('CONTENT_STORE=s3 needs S3_BUCKET (an existing bucket)');
  const s3Given = ['S3_ENDPOINT', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE', 'S3_CHECKSUMS'].filter(
    (k) => given[k] !== undefined,
  );
  if (!given.S3_BUCKET && s3Given.length && given.CONTENT_STORE !== 's3')
    problems.push(`${s3Given.join(', ')} ${s3Given.length === 1 ? 'needs' : 'need'} S3_BUCKET`);
  if (Boolean(given.S3_ACCESS_KEY_ID) !== Boolean(given.S3_SECRET_ACCESS_KEY)) {
    problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together (or leave both unset for the SDK credential chain)');
  }
  return problems;
}

/** DATABASE_REPLICA_URL names no database (the primary's is read) or a valid one. */
export function replicaProblems(rawReplicaUrl: string | undefined, earlier: string[]): string[] {
  if (rawReplicaUrl === undefined || earlier.some((p) => p.includes('DATABASE_REPLICA_URL'))) return [];
  const replicaDb = databaseNameOf(rawReplicaUrl);
  if (replicaDb === '' || /^[A-Za-z0-9_$-]{1,64}$/.test(replicaDb)) return [];
  return ["DATABASE_REPLICA_URL must name no database (the primary's is read) or a valid one (letters, digits, _, $ or -)"];
}

export function databaseNameOf(databaseUrl: string): string {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''));
  return name;
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** A value Express's `trust proxy` reads the same way: true/false, hops, or a list of addresses. */
export function isTrustProxy(v: string): boolean {
  if (v === 'true' || v === 'false' || /^\d{1,3}$/.test(v)) return true;
  return v.split(',').every((raw) => {
    const item = raw.trim();
    if (PROXY_NAMES.has(item)) return true;
    const [addr, bits, ...rest] = item.split('/');
    const family = net.isIP(addr);
    if (!family || rest.length) return false;
    if (bits === undefined) return true;
    return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
  });
}

/** The price table (PRICES_FILE, or the shipped one); null, with the problem listed, when the file is wrong. */
export function pricesOf(file: string | null, problems: string[]): PriceTable | null {
  try {
    return loadPriceTable(file);
  } catch (e) {
    problems.push(`PRICES_FILE ${(e as Error).message}`);
    return null;
  }
}
