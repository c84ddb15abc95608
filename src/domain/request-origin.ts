/**
 * Where the request being handled comes from: its client address (after `trust proxy`), for the
 * audit log. The HTTP door runs each request inside `withRequestOrigin`; services read it with
 * `requestOrigin()` (undefined outside a request: the admin CLI, background jobs).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { isIPv4, isIPv6 } from 'node:net';

interface RequestOrigin {
  /** The client's address as the door saw it (not yet truncated). */
  ip: string | undefined;
}

const current = new AsyncLocalStorage<RequestOrigin>();

/** Runs `fn` (and all the asynchronous work it starts) as handling a request from `origin`. */
export function withRequestOrigin<T>(origin: RequestOrigin, fn: () => T): T {
  return current.run(origin, fn);
}

export function requestOrigin(): RequestOrigin | undefined {
  return current.getStore();
}

/** The eight 16-bit groups of an IPv6 address (with an embedded IPv4 tail converted), or null. */
function ipv6Groups(ip: string): number[] | null {
  let text = ip.replace(/%.*$/, '');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1].split('.').map(Number);
    text = `${text.slice(0, -v4[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const groups = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/**
 * An address cut to its network, as the audit log keeps it: IPv4 to its /24 (`203.0.113.0/24`),
 * IPv6 to its /48 (`2001:db8:85a3::/48`); an IPv4 address mapped into IPv6 (`::ffff:203.0.113.7`)
 * counts as IPv4. Anything else → null.
 */
export function truncateIp(ip: string | undefined | null): string | null {
  if (!ip) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const v4 = mapped ? mapped[1] : ip;
  if (isIPv4(v4)) return `${v4.split('.').slice(0, 3).join('.')}.0/24`;
  if (!isIPv6(ip)) return null;
  const groups = ipv6Groups(ip);
  if (!groups) return null;
  return `${groups
    .slice(0, 3)
    .map((g) => g.toString(16))
    .join(':')}::/48`;
}
