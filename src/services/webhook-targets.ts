/**
 * Where a webhook may send: the URL's host is resolved when the webhook is made and again before
 * every attempt, and every address it resolves to must be public (src/domain/webhooks.ts,
 * isPublicAddress) unless WEBHOOK_ALLOW_PRIVATE=true. The attempt then connects to the address
 * checked here, never to a name resolved again later, so a DNS answer that changes between the
 * check and the connection cannot lead it elsewhere.
 */
import dns from 'node:dns';
import net from 'node:net';
import { invalid } from '../errors';
import { isPublicAddress } from '../domain/webhooks';
import type { Deps } from './context';

/** A target checked for one attempt: the URL and the address to connect to. */
export interface Target {
  url: URL;
  address: string;
}

/** Why a target is refused (the message of a 400 at creation, the error of an attempt). */
export class TargetRefused extends Error {}

const systemResolve = async (hostname: string): Promise<string[]> => (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** The URL as a webhook target (http or https, no credentials), or why not. */
function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused('url must be an absolute http or https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TargetRefused('url must be an absolute http or https URL');
  if (url.username || url.password) throw new TargetRefused('url must not carry a user name or password');
  return url;
}

/** `p`, or a rejection once `ms` have passed. */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Resolves the target's host and checks every address it has; the first one is where to connect. */
export async function resolveTarget(deps: Pick<Deps, 'config' | 'resolveHost'>, raw: string, timeoutMs = 10_000): Promise<Target> {
  const url = parseTarget(raw);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    try {
      addresses = await withTimeout((deps.resolveHost ?? systemResolve)(host), timeoutMs);
    } catch {
      throw new TargetRefused(`url: the host ${host} was not found`);
    }
    if (addresses.length === 0) throw new TargetRefused(`url: the host ${host} was not found`);
  }
  if (!deps.config.webhookAllowPrivate) {
    const refused = addresses.find((a) => !isPublicAddress(a));
    if (refused !== undefined)
      throw new TargetRefused(
        `url: ${host} is on a private, loopback or link-local address (${refused}); webhooks are sent to public addresses only, unless the operator sets WEBHOOK_ALLOW_PRIVATE=true`,
      );
  }
  return { url, address: addresses[0] };
}

/** The same check for a webhook being made: a refusal is a 400. */
export async function requireAllowedTarget(deps: Pick<Deps, 'config' | 'resolveHost'>, raw: string): Promise<URL> {
  try {
    return (await resolveTarget(deps, raw)).url;
  } catch (err) {
    if (err instanceof TargetRefused) throw invalid(err.message);
    throw err;
  }
}
