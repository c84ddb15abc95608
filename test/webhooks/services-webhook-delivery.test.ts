/**
 * Webhook events and their delivery, pinned at the service layer (no HTTP): an event is recorded
 * for the webhooks that asked for it and whose owner may read it (of its project, of the owning
 * team, of the owner's own projects) and no other; the worker claims a delivery, signs it with the
 * Standard Webhooks headers, tries a failure again after the next delay, fails it after the last,
 * disables a webhook answered 410, and never sends to a webhook whose owner may no longer read it.
 */
import crypto from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { Ctx } from '../../src/services/context';
import { upsertSession } from '../../src/services/session-upload';
import { addMember, removeMember } from '../../src/services/teams';
import { startWebhookWorker } from '../../src/services/webhook-delivery';
import { createWebhook, deleteWebhook, getWebhook, listDeliveries, resendDelivery } from '../../src/services/webhooks';
import { again, castOf, failure, startServices, type Cast, type ServiceHarness } from '../support/services';
import { startReceiver, status, type Receiver } from './receiver';
import { createLogger } from '../../src/logger';
import { eventually } from '../support/eventually';

let h: ServiceHarness;
let cast: Cast;
let rx: Receiver;
let worker: { stop(): Promise<void> } | null = null;
/** How a receiver path answers, one status per request (the last one repeats); 200 when not set. */
const answers = new Map<string, number[]>();

interface Hook {
  id: string;
  secret: string;
  /** The path requests arrive at. */
  path: string;
}

async function hook(ctx: Ctx, extra: Record<string, unknown> = {}): Promise<Hook> {
  const path = `/${crypto.randomUUID()}`;
  const { webhook, secret } = await createWebhook(again(ctx), { url: `${rx.url}${path}`, events: ['session.created'], ...extra });
  return { id: webhook.id, secret, path: `/hook${path}` };
}
const upload = (ctx: Ctx, projectId: string) =>
  upsertSession(again(ctx), projectId, crypto.randomUUID(), { name: 'Hooked', markdown: '_**User**_\n\nHi\n\n_**Agent**_\n\nHello\n' });
const deliveries = (ctx: Ctx, w: Hook) => listDeliveries(again(ctx), w.id);
const got = (w: Hook) => rx.received.filter((r) => r.path === w.path);
const startWorker = () => (worker = startWebhookWorker(h.deps));

/** Waits until the webhook's newest delivery satisfies `done`; fails after 20 s. */
async function until(ctx: Ctx, w: Hook, done: (d: Awaited<ReturnType<typeof listDeliveries>>[number]) => boolean) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const [d] = await deliveries(ctx, w);
    if (d && done(d)) return d;
    if (Date.now() > deadline) throw new Error(`delivery not as expected: ${JSON.stringify(d)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  // Retries 3 s apart: long enough that the polls below see a delivery waiting between attempts on a busy machine.
  h = await startServices({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_DELAYS_S: '3,3', WEBHOOK_TIMEOUT_S: '5' });
  cast = await castOf(h);
  rx = await startReceiver();
  rx.answer = (r, res) => {
    const queue = answers.get(r.path) ?? [200];
    status(queue.length > 1 ? queue.shift()! : queue[0])(r, res);
  };
});
afterEach(async () => {
  await worker?.stop();
  worker = null;
});
afterAll(async () => {
  await worker?.stop();
  await rx?.close();
  await h?.close();
});

describe('which webhooks an event is recorded for', () => {
  test("an upload to a personal project: the owner's webhooks of it and of their own projects", async () => {
    const own = await hook(cast.owner);
    const ofProject = await hook(cast.owner, { projectId: cast.personal });
    const otherType = await hook(cast.owner, { events: ['session.deleted'] });
    const outsiders = await hook(cast.outsider);
    const teamHook = await hook(cast.admin, { teamId: cast.teamId });
    await upload(cast.owner, cast.personal);
    expect((await deliveries(cast.owner, own)).map((d) => [d.type, d.status, d.attempts])).toEqual([['session.created', 'pending', 0]]);
    expect(await deliveries(cast.owner, ofProject)).toHaveLength(1);
    expect((await deliveries(cast.owner, ofProject))[0].eventId).toBe((await deliveries(cast.owner, own))[0].eventId);
    expect(await deliveries(cast.owner, otherType)).toEqual([]);
    expect(await deliveries(cast.outsider, outsiders)).toEqual([]);
    expect(await deliveries(cast.admin, teamHook)).toEqual([]);
  });

  test("an upload to a team project: its readers' project webhooks and the team admin's team webhook, not members' own", async () => {
    const viewers = await hook(cast.viewer, { projectId: cast.teamProject });
    const teamHook = await hook(cast.admin, { teamId: cast.teamId });
    const membersOwn = await hook(cast.member);
    const admins = await hook(cast.admin);
    const outsiders = await hook(cast.outsider);
    await upload(cast.member, cast.teamProject);
    expect(await deliveries(cast.viewer, viewers)).toHaveLength(1);
    expect(await deliveries(cast.admin, teamHook)).toHaveLength(1);
    expect(await deliveries(cast.member, membersOwn)).toEqual([]);
    expect(await deliveries(cast.admin, admins)).toEqual([]);
    expect(await deliveries(cast.outsider, outsiders)).toEqual([]);
  });

  test("a team's member.added goes to its admins' team webhooks only", async () => {
    const teamHook = await hook(cast.admin, { teamId: cast.teamId, events: ['member.added'] });
    const viewers = await hook(cast.viewer, { projectId: cast.teamProject, events: ['member.added'] });
    const newcomer = await h.user('newcomer');
    await addMember(again(cast.admin), cast.teamId, { email: newcomer.email, role: 'viewer' });
    expect((await deliveries(cast.admin, teamHook)).map((d) => d.type)).toEqual(['member.added']);
    expect(await deliveries(cast.viewer, viewers)).toEqual([]);
  });

  test('a refused write records nothing', async () => {
    const viewers = await hook(cast.viewer, { projectId: cast.teamProject });
    expect(await failure(upload(cast.viewer, cast.teamProject))).toMatchObject({ code: 'FORBIDDEN' });
    expect(await deliveries(cast.viewer, viewers)).toEqual([]);
  });
});

describe('delivery', () => {
  test('while claiming fails, each poll waits twice as long as the last (up to 30 s); after a claim works, 1 s again', async () => {
    const logged: Array<{ msg?: string; nextPollMs?: number }> = [];
    const logger = createLogger('error', { write: (line: string) => void logged.push(JSON.parse(line)) });
    const failed = () => logged.filter((l) => l.msg === 'webhook worker: claiming failed').map((l) => l.nextPollMs);
    const { pool, signals } = h.deps.db;
    const poll = async (n: number) => {
      signals.webhooksWritten.emit(); // asks for a poll at once, whatever the wait
      await eventually(`claiming to have failed ${n} times`, () => failed().length >= n);
    };
    worker = startWebhookWorker({ ...h.deps, logger });
    await pool.query('RENAME TABLE webhook_deliveries TO webhook_deliveries_away');
    try {
      for (let n = 1; n <= 6; n++) await poll(n);
      expect(failed()).toEqual([2000, 4000, 8000, 16000, 30000, 30000]);
      await pool.query('RENAME TABLE webhook_deliveries_away TO webhook_deliveries');
      // Claiming works again: a delivery made now is sent (its write asks for a poll at once).
      const w = await hook(cast.owner);
      try {
        await upload(cast.owner, cast.personal);
        expect(await until(cast.owner, w, (x) => x.status !== 'pending')).toMatchObject({ status: 'delivered' });
      } finally {
        await deleteWebhook(again(cast.owner), w.id);
      }
      // ...and the failures before it are forgotten: the next one waits 2 s again.
      await pool.query('RENAME TABLE webhook_deliveries TO webhook_deliveries_away');
      await poll(7);
      expect(failed()).toEqual([2000, 4000, 8000, 16000, 30000, 30000, 2000]);
    } finally {
      await pool.query('RENAME TABLE IF EXISTS webhook_deliveries_away TO webhook_deliveries');
    }
  });

  test('claimed and sent once, signed with the Standard Webhooks headers', async () => {
    const w = await hook(cast.owner);
    await upload(cast.owner, cast.personal);
    startWorker();
    const d = await until(cast.owner, w, (x) => x.status !== 'pending');
    expect(d).toMatchObject({ status: 'delivered', attempts: 1, responseStatus: 200, error: null, nextAttemptAt: null });
    const [req] = got(w);
    expect(got(w)).toHaveLength(1);
    expect(req.headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': d.eventId,
      'webhook-timestamp': expect.stringMatching(/^\d{10}$/),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]+=*$/),
    });
    const body = new StandardWebhook(w.secret).verify(req.body, req.headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
    expect(body).toMatchObject({ type: 'session.created', data: { projectId: cast.personal, title: 'Hooked' } });
    // Another secret does not verify it.
    const other = (await hook(cast.owner)).secret;
    expect(() => new StandardWebhook(other).verify(req.body, req.headers as Record<string, string>)).toThrow();
  });

  test('a failure is tried again after the next delay, with the same id, until delivered', async () => {
    const w = await hook(cast.owner);
    answers.set(w.path, [500, 500, 200]);
    await upload(cast.owner, cast.personal);
    startWorker();
    const waiting = await until(cast.owner, w, (x) => x.responseStatus === 500);
    expect(waiting).toMatchObject({ status: 'pending', error: 'answered 500' });
    expect(Date.parse(waiting.nextAttemptAt!)).toBeGreaterThan(Date.parse(waiting.attemptedAt!));
    const d = await until(cast.owner, w, (x) => x.status !== 'pending');
    expect(d).toMatchObject({ status: 'delivered', attempts: 3, responseStatus: 200, error: null });
    expect(got(w).map((r) => r.headers['webhook-id'])).toEqual([d.eventId, d.eventId, d.eventId]);
  });

  test('after the last delay, failed; a redirect is not followed and counts as a failure', async () => {
    const w = await hook(cast.owner);
    answers.set(w.path, [302, 503]);
    await upload(cast.owner, cast.personal);
    startWorker();
    expect(await until(cast.owner, w, (x) => x.responseStatus === 302)).toMatchObject({ status: 'pending', error: 'redirect (302) not followed' });
    const d = await until(cast.owner, w, (x) => x.status !== 'pending');
    expect(d).toMatchObject({ status: 'failed', attempts: 3, responseStatus: 503, error: 'answered 503', nextAttemptAt: null });
    expect(got(w)).toHaveLength(3);
  });

  test('410 Gone disables the webhook: nothing more is recorded for it, and nothing resent', async () => {
    const w = await hook(cast.owner);
    answers.set(w.path, [410]);
    await upload(cast.owner, cast.personal);
    startWorker();
    const d = await until(cast.owner, w, (x) => x.status !== 'pending');
    expect(d).toMatchObject({ status: 'failed', attempts: 1, responseStatus: 410, error: 'answered 410 Gone: webhook disabled' });
    expect(await getWebhook(again(cast.owner), w.id)).toMatchObject({ disabled: true });
    await upload(cast.owner, cast.personal);
    expect(await deliveries(cast.owner, w)).toHaveLength(1);
    expect(await failure(resendDelivery(again(cast.owner), w.id, d.id))).toEqual({ code: 'CONFLICT', message: 'Webhook is disabled' });
    expect(got(w)).toHaveLength(1);
  });

  test('never sent to a webhook whose owner may no longer read what it is about', async () => {
    const leaver = await h.user('leaver');
    await addMember(again(cast.admin), cast.teamId, { email: leaver.email, role: 'member' });
    const w = await hook(leaver, { projectId: cast.teamProject });
    await upload(cast.admin, cast.teamProject);
    expect((await deliveries(leaver, w)).map((x) => x.status)).toEqual(['pending']);
    await removeMember(again(cast.admin), cast.teamId, leaver.user.id);
    startWorker();
    const d = await until(leaver, w, (x) => x.status !== 'pending');
    expect(d).toMatchObject({ status: 'skipped', responseStatus: null, error: 'its owner can no longer read this' });
    // Nor is anything more recorded for it.
    await upload(cast.admin, cast.teamProject);
    expect(await deliveries(leaver, w)).toHaveLength(1);
    expect(got(w)).toEqual([]);
  });
});
