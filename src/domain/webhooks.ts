/**
 * Webhooks, the rules without I/O: the event types, the signing secret and the signature
 * (Standard Webhooks: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed by the secret's
 * base64 part), which addresses a delivery may reach, and the retry schedule.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { noteSecretIssued } from './issued-secrets';

export const WEBHOOK_EVENTS = [
  'session.created',
  'session.updated',
  'session.deleted',
  'share.created',
  'share.revoked',
  'project.moved',
  'member.added',
  'member.removed',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A new signing secret: `whsec_` and the base64 of 32 random bytes (shown once). */
export function newWebhookSecret(): string {
  noteSecretIssued();
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A new event id (`webhook-id`): the same for every attempt of one event. */
export const newEventId = (): string => `msg_${randomUUID().replaceAll('-', '')}`;

/** The `webhook-signature` header of a body sent with this id and timestamp (seconds). */
export function webhookSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** Benchmarking networks (RFC 2544), which the address library counts as unicast. */
const BENCHMARKING = ipaddr.IPv4.parseCIDR('198.18.0.0/15');

/**
 * Whether a delivery may connect to this address: only public unicast. Refused: private,
 * loopback, link-local, unspecified, carrier-grade NAT, multicast, broadcast, reserved and
 * documentation ranges, unique-local IPv6, and IPv6 forms that carry an IPv4 address (mapped,
 * NAT64, 6to4, Teredo), whatever they carry.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') {
    const v4 = parsed as ipaddr.IPv4;
    return v4.range() === 'unicast' && !v4.match(BENCHMARKING);
  }
  const v6 = parsed as ipaddr.IPv6;
  if (v6.zoneId) return false;
  return v6.range() === 'unicast';
}

/** When the attempt after `attempts` failed ones is due, in seconds; null: no more attempts. */
export function retryDelayS(delays: readonly number[], attempts: number): number | null {
  return attempts >= 1 && attempts <= delays.length ? delays[attempts - 1] : null;
}
