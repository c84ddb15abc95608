import { OutgoingMessage, type ServerResponse } from 'node:http';

/**
 * Response headers the service writes itself: names it declares and values it makes (constants,
 * numbers, its request ids and validators), never a value taken from a request unchecked.
 *
 * `setHeader` checks every name and value it is given (two regular expressions), lower-cases the
 * name and stores `[name, value]` under it; a read of one session sets about 25 headers that way,
 * ~25 µs of a request's CPU under load (BENCHMARKS.md, "REST reads", fourth round). For these
 * headers the checks can only pass, so they are stored as `setHeader` stores them, with the
 * lower-cased name worked out once per header. The store is node's own (the response's
 * `kOutHeaders` object): everything after (getHeader, removeHeader, writeHead, Express) sees them
 * as if set by `setHeader`. Checked once at start-up against `setHeader` itself; if this node
 * stores headers differently, every header goes through `setHeader` instead.
 */
const kOutHeaders = Object.getOwnPropertySymbols(new OutgoingMessage()).find((s) => s.description === 'kOutHeaders');

type HeaderStore = Record<string, [string, string]>;
type WithStore = { [key: symbol]: HeaderStore | null | undefined };

/** A header of the service's own: its name as sent and as stored. */
interface OwnHeader {
  name: string;
  key: string;
}

export const ownHeader = (name: string): OwnHeader => ({ name, key: name.toLowerCase() });

/** The body's headers, for the answers the service writes without Express's send. */
export const CONTENT_TYPE = ownHeader('Content-Type');
export const CONTENT_LENGTH = ownHeader('Content-Length');

function storeOf(res: ServerResponse): HeaderStore | null {
  const r = res as unknown as WithStore;
  let store = r[kOutHeaders!];
  if (store === undefined) return null;
  if (store === null) r[kOutHeaders!] = store = Object.create(null) as HeaderStore;
  return store;
}

/** Whether storing directly gives what setHeader gives, on this node. */
function storesLikeSetHeader(): boolean {
  if (!kOutHeaders) return false;
  try {
    const direct = new OutgoingMessage();
    const store = storeOf(direct as ServerResponse);
    if (!store) return false;
    store['x-own-check'] = ['X-Own-Check', '1'];
    const viaSet = new OutgoingMessage();
    viaSet.setHeader('X-Own-Check', '1');
    const stored = (viaSet as unknown as WithStore)[kOutHeaders];
    return (
      JSON.stringify(stored && { ...stored }) === JSON.stringify({ ...store }) &&
      direct.getHeader('x-own-check') === '1' &&
      direct.hasHeader('X-Own-Check') &&
      (direct.removeHeader('X-Own-Check'), !direct.hasHeader('x-own-check'))
    );
  } catch {
    return false;
  }
}

const DIRECT = storesLikeSetHeader();
/** Whether this node's headers are stored directly (false: every header through setHeader). */
export const ownHeadersStoredDirectly = DIRECT;

/** Sets one of the service's own headers (see above); as `res.setHeader` once the head is sent (it throws then). */
export function setOwnHeader(res: ServerResponse, header: OwnHeader, value: string): void {
  if (!DIRECT || res.headersSent) {
    res.setHeader(header.name, value);
    return;
  }
  storeOf(res)![header.key] = [header.name, value];
}

/** Headers of fixed values, set (or removed: a null value) in order, as a list worked out once. */
export function ownHeadersOnce(calls: ReadonlyArray<readonly [name: string, value: string | null]>): (res: ServerResponse) => void {
  const list = calls.map(([name, value]) => ({ ...ownHeader(name), value }));
  return (res) => {
    const store = DIRECT && !res.headersSent ? storeOf(res) : null;
    for (const h of list) {
      if (h.value === null) res.removeHeader(h.name);
      else if (store) store[h.key] = [h.name, h.value];
      else res.setHeader(h.name, h.value);
    }
  };
}
