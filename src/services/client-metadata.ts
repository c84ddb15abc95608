/**
 * Client ID metadata documents: an OAuth client whose id is an https URL publishes its metadata
 * there. The service fetches it as it would fetch anything a stranger names: public addresses only
 * (the address connected to is the one checked, so a name that resolves to a private address, or
 * re-resolves to one, is refused), no redirects, 5 seconds, 64 KiB, and cached. Hosts on the
 * operator's allow-list (OAUTH_CLIENT_HOSTS) may be on any address and over http.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

const FETCH_TIMEOUT_MS = 5000;
const MAX_BYTES = 64 * 1024;
const CACHE_MS = 10 * 60_000;
const CACHE_MAX = 500;

/** Addresses a fetch never reaches unless its host is allow-listed: private, loopback, link-local, shared, multicast, reserved. */
const NOT_PUBLIC = new net.BlockList();
for (const [net4, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC.addSubnet(net4, bits, 'ipv4');
for (const [net6, bits] of [
  ['::', 128],
  ['::1', 128],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(net6, bits, 'ipv6');

function isPublicAddress(address: string): boolean {
  const family = net.isIPv4(address) ? 'ipv4' : net.isIPv6(address) ? 'ipv6' : null;
  if (!family) return false;
  const mapped = family === 'ipv6' ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address) : null;
  if (mapped) return !NOT_PUBLIC.check(mapped[1], 'ipv4');
  return !NOT_PUBLIC.check(address, family);
}

export class MetadataFetchError extends Error {}

/** A lookup that answers only public addresses (the connection is made to what it answers). */
const publicLookup: net.LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 4);
    const list = addresses;
    const bad = list.find((a) => !isPublicAddress(a.address));
    if (bad || list.length === 0) return callback(new MetadataFetchError(`${hostname} resolves to an address that is not public`), '', 4);
    if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
    callback(null, list[0].address, list[0].family);
  });
};

/** The host as the allow-list names it: `name` or `name:port`. */
const allowListed = (url: URL, hosts: readonly string[]) => hosts.includes(url.hostname.toLowerCase()) || hosts.includes(url.host.toLowerCase());

/** Whether `id` may name a metadata document: https with a path (http only for an allow-listed host). */
export function metadataUrlOf(id: string, allowHosts: readonly string[]): URL | null {
  if (id.length > 512) return null;
  let url: URL;
  try {
    url = new URL(id);
  } catch {
    return null;
  }
  if (url.username || url.password || url.hash || url.pathname === '/') return null;
  if (url.protocol === 'https:') return url;
  return url.protocol === 'http:' && allowListed(url, allowHosts) ? url : null;
}

const cache = new Map<string, { at: number; doc: unknown }>();

/** Fetches and parses the JSON document at `url` under the rules above (cached for 10 minutes). */
export async function fetchClientMetadata(url: URL, allowHosts: readonly string[]): Promise<unknown> {
  const hit = cache.get(url.href);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.doc;
  const doc = await fetchJson(url, allowListed(url, allowHosts));
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(url.href, { at: Date.now(), doc });
  return doc;
}

function fetchJson(url: URL, trusted: boolean): Promise<unknown> {
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (!trusted && net.isIP(literal) && !isPublicAddress(literal)) return Promise.reject(new MetadataFetchError('The client metadata address is not public'));
  const get = url.protocol === 'https:' ? https.get : http.get;
  return new Promise((resolve, reject) => {
    const req = get(url, { headers: { accept: 'application/json' }, timeout: FETCH_TIMEOUT_MS, ...(trusted ? {} : { lookup: publicLookup }) }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new MetadataFetchError(`The client metadata document answered ${res.statusCode}`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BYTES) {
          req.destroy(new MetadataFetchError('The client metadata document is larger than 64 KiB'));
          return;
        }
        chunks.push(c);
      });
      res.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          reject(new MetadataFetchError('The client metadata document is not JSON'));
        }
      });
      res.on('error', reject);
    });
    // The whole exchange, not only an idle socket, within the time limit.
    const timer = setTimeout(() => req.destroy(new MetadataFetchError('The client metadata document took longer than 5 seconds')), FETCH_TIMEOUT_MS);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => req.destroy(new MetadataFetchError('The client metadata document took longer than 5 seconds')));
    req.on('error', (err) =>
      reject(err instanceof MetadataFetchError ? err : new MetadataFetchError(`The client metadata document could not be fetched: ${err.message}`)),
    );
  });
}
