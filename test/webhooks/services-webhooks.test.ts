/**
 * The webhook rules, pinned at the service layer (no HTTP): who may make a webhook for a project
 * (whoever reads it), for a team (its admins) or for their own projects; the targets refused (not
 * http(s), credentials, private addresses unless allowed); the secret shown once; a webhook is its
 * owner's alone (anyone else's is the same 404 as an unknown one); deliveries and their resend.
 */
import crypto from 'node:crypto';
import { inTransaction } from '../../src/data/transaction';
import { disableWebhook } from '../../src/data/webhooks';
import type { Ctx } from '../../src/services/context';
import { createProject } from '../../src/services/projects';
import { upsertSession } from '../../src/services/session-upload';
import { addMember } from '../../src/services/teams';
import { sessionsDeleted } from '../../src/services/webhook-events';
import { createWebhook, deleteWebhook, getWebhook, listDeliveries, listWebhooks, resendDelivery } from '../../src/services/webhooks';
import { again, castOf, failure, FORBIDDEN, refused, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

/** A public address: nothing is sent (the delivery worker is not started here). */
const TARGET = 'https://93.184.216.34/hook';
const READ_ONLY = refused('This key is read-only');
const WEBHOOK_NOT_FOUND = { code: 'NOT_FOUND', message: 'Webhook not found' };
const DELIVERY_NOT_FOUND = { code: 'NOT_FOUND', message: 'Delivery not found' };

let h: ServiceHarness;
let owner: ServiceUser;
let admin: ServiceUser;
let member: ServiceUser;
let viewer: ServiceUser;
let outsider: ServiceUser;
let personal: string;
let teamId: string;
let teamProject: string;

const hook = (ctx: Ctx, extra: Record<string, unknown> = {}) => createWebhook(again(ctx), { url: TARGET, events: ['session.created'], ...extra });
const upload = (ctx: Ctx, projectId: string) =>
  upsertSession(again(ctx), projectId, crypto.randomUUID(), { name: 'Hooked', markdown: '_**User**_\n\nHi\n\n_**Agent**_\n\nHello\n' });

beforeAll(async () => {
  h = await startServices();
  ({ owner, admin, member, viewer, outsider, personal, teamId, teamProject } = await castOf(h));
});
afterAll(() => h?.close());

describe('who may make a webhook', () => {
  test('for their own projects: anyone signed in, with the secret shown once', async () => {
    const { webhook, secret } = await hook(outsider, { events: ['session.created', 'session.deleted', 'session.created'] });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{20,}$/);
    expect(webhook).toMatchObject({ url: TARGET, events: ['session.created', 'session.deleted'], projectId: null, teamId: null, disabled: false });
    const seen = [await getWebhook(again(outsider), webhook.id), ...(await listWebhooks(again(outsider)))];
    expect(JSON.stringify(seen)).not.toContain(secret);
    expect(Object.keys(seen[0])).not.toContain('secret');
  });

  test("for a project: whoever reads it (a team's viewer too); anyone else is refused", async () => {
    expect((await hook(owner, { projectId: personal })).webhook.projectId).toBe(personal);
    expect((await hook(viewer, { projectId: teamProject })).webhook.projectId).toBe(teamProject);
    expect(await failure(hook(outsider, { projectId: personal }))).toEqual(FORBIDDEN);
    expect(await failure(hook(owner, { projectId: 'no-such-project' }))).toEqual({ code: 'NOT_FOUND', message: 'Project not found' });
  });

  test('for a team: its admins only; a member is told why, an outsider does not learn it exists', async () => {
    expect((await hook(admin, { teamId })).webhook.teamId).toBe(teamId);
    expect(await failure(hook(member, { teamId }))).toEqual(refused("Only the team's admins can add webhooks for the team"));
    expect(await failure(hook(viewer, { teamId }))).toEqual(refused("Only the team's admins can add webhooks for the team"));
    expect(await failure(hook(outsider, { teamId }))).toEqual({ code: 'NOT_FOUND', message: 'Team not found' });
    expect(await failure(hook(admin, { teamId, projectId: teamProject }))).toEqual({ code: 'VALIDATION_ERROR', message: 'Give projectId or teamId, not both' });
  });

  test('a read-only key makes none, and deletes or resends none', async () => {
    const { webhook } = await hook(owner);
    const ro = { ...owner, user: { ...owner.user, readOnly: true } };
    expect(await failure(hook(ro))).toEqual(READ_ONLY);
    expect(await failure(deleteWebhook(ro, webhook.id))).toEqual(READ_ONLY);
    expect(await failure(resendDelivery(ro, webhook.id, '1'))).toEqual(READ_ONLY);
    expect((await getWebhook(ro, webhook.id)).id).toBe(webhook.id);
  });

  test('none is written when the input is refused', async () => {
    const before = (await listWebhooks(again(member))).length;
    expect(await failure(hook(member, { events: [] }))).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/^events must be a non-empty list of: session\.created/),
    });
    expect((await failure(hook(member, { events: ['session.read'] }))).code).toBe('VALIDATION_ERROR');
    expect((await failure(hook(member, { projectId: teamProject, teamId }))).code).toBe('VALIDATION_ERROR');
    expect((await listWebhooks(again(member))).length).toBe(before);
  });
});

describe('where a webhook may send', () => {
  const refusedUrl = async (url: string, ctx: Ctx = owner) => (await failure(createWebhook(again(ctx), { url, events: ['session.created'] }))).message;

  test('an absolute http(s) URL without credentials', async () => {
    expect(await refusedUrl('ftp://93.184.216.34/hook')).toBe('url must be an absolute http or https URL');
    expect(await refusedUrl('/relative/hook')).toBe('url must be an absolute http or https URL');
    expect(await refusedUrl('https://user:pw@93.184.216.34/hook')).toBe('url must not carry a user name or password');
  });

  test('private, loopback and link-local addresses are refused, also behind a host name', async () => {
    expect(await refusedUrl('http://127.0.0.1:9/hook')).toBe(
      'url: 127.0.0.1 is on a private, loopback or link-local address (127.0.0.1); webhooks are sent to public addresses only, unless the operator sets WEBHOOK_ALLOW_PRIVATE=true',
    );
    expect(await refusedUrl('http://[::1]/hook')).toMatch(/^url: ::1 is on a private/);
    expect(await refusedUrl('http://169.254.169.254/latest')).toMatch(/^url: 169\.254\.169\.254 is on a private/);
    h.deps.resolveHost = (host) => Promise.resolve(host === 'mixed.example' ? ['93.184.216.34', '10.1.2.3'] : []);
    try {
      expect(await refusedUrl('https://mixed.example/hook')).toBe(
        'url: mixed.example is on a private, loopback or link-local address (10.1.2.3); webhooks are sent to public addresses only, unless the operator sets WEBHOOK_ALLOW_PRIVATE=true',
      );
      expect(await refusedUrl('https://nowhere.example/hook')).toBe('url: the host nowhere.example was not found');
    } finally {
      delete h.deps.resolveHost;
    }
  });

  test('with private targets allowed, a private address is accepted', async () => {
    const allowing = { ...owner, deps: { ...owner.deps, config: { ...owner.deps.config, webhookAllowPrivate: true } } };
    const { webhook } = await createWebhook(allowing, { url: 'http://127.0.0.1:9/hook', events: ['session.created'] });
    expect(webhook.url).toBe('http://127.0.0.1:9/hook');
  });
});

describe("a webhook is its owner's alone", () => {
  test("another user's webhook is the same 404 as an unknown one, for every call", async () => {
    const { webhook } = await hook(owner, { projectId: personal });
    await upload(owner, personal);
    const [delivery] = await listDeliveries(again(owner), webhook.id);
    for (const [ctx, id] of [
      [outsider, webhook.id],
      [owner, crypto.randomUUID()],
    ] as const) {
      expect(await failure(getWebhook(again(ctx), id))).toEqual(WEBHOOK_NOT_FOUND);
      expect(await failure(listDeliveries(again(ctx), id))).toEqual(WEBHOOK_NOT_FOUND);
      expect(await failure(resendDelivery(again(ctx), id, delivery.id))).toEqual(WEBHOOK_NOT_FOUND);
      expect(await failure(deleteWebhook(again(ctx), id))).toEqual(WEBHOOK_NOT_FOUND);
    }
    expect((await listWebhooks(again(outsider))).map((w) => w.id)).not.toContain(webhook.id);
    expect((await getWebhook(again(owner), webhook.id)).id).toBe(webhook.id);
  });

  test("a team's webhook belongs to the admin who made it, not to the team's other admins", async () => {
    const second = await h.user('second-admin');
    await addMember(again(admin), teamId, { email: second.email, role: 'admin' });
    const { webhook } = await hook(admin, { teamId });
    expect(await failure(deleteWebhook(again(second), webhook.id))).toEqual(WEBHOOK_NOT_FOUND);
    expect((await listWebhooks(again(second))).map((w) => w.id)).not.toContain(webhook.id);
  });

  test('a deleted webhook is gone: listed no more, a second delete is 404', async () => {
    const { webhook } = await hook(owner);
    await deleteWebhook(again(owner), webhook.id);
    expect((await listWebhooks(again(owner))).map((w) => w.id)).not.toContain(webhook.id);
    expect(await failure(deleteWebhook(again(owner), webhook.id))).toEqual(WEBHOOK_NOT_FOUND);
  });
});

describe('deliveries and resend', () => {
  test('an event the webhook listens for is a pending delivery; a resend is a new delivery of the same event', async () => {
    const lister = await h.user('lister');
    const project = (await createProject(lister, { name: 'Listened' })).id;
    const { webhook } = await hook(lister, { events: ['session.created'] });
    const deaf = (await hook(lister, { events: ['share.created'] })).webhook;
    await upload(lister, project);
    const [first, ...rest] = await listDeliveries(again(lister), webhook.id);
    expect(rest).toEqual([]);
    expect(first).toMatchObject({ type: 'session.created', status: 'pending', attempts: 0, eventId: expect.stringMatching(/^msg_/) });
    expect(await listDeliveries(again(lister), deaf.id)).toEqual([]);

    const resent = await resendDelivery(again(lister), webhook.id, first.id);
    expect(resent).toMatchObject({ eventId: first.eventId, type: first.type, status: 'pending', attempts: 0 });
    expect(resent.id).not.toBe(first.id);
    expect((await listDeliveries(again(lister), webhook.id)).map((d) => d.id).sort()).toEqual([first.id, resent.id].sort());
  });

  test('the sessions of a project deleted at once: one session.deleted each, in order, to the webhooks that listen', async () => {
    const lister = await h.user('many');
    const project = (await createProject(lister, { name: 'Many' })).id;
    const { webhook } = await hook(lister, { events: ['session.deleted'], projectId: project });
    const deaf = (await hook(lister, { events: ['session.created'], projectId: project })).webhook;
    // More than one statement's worth of events.
    const sessionIds = Array.from({ length: 1001 }, () => crypto.randomUUID());
    await inTransaction(h.deps.db, (tx) => sessionsDeleted(tx, {}, lister.user.id, project, sessionIds));
    const rows = await h.deps.db.writes.query<{ eventId: string; payload: string }>(
      'SELECT eventId, payload FROM webhook_deliveries WHERE webhookId = ? ORDER BY id',
      webhook.id,
    );
    expect(rows.map((r) => JSON.parse(r.payload).data.sessionId)).toEqual(sessionIds);
    expect(new Set(rows.map((r) => r.eventId)).size).toBe(sessionIds.length);
    expect(JSON.parse(rows[0].payload)).toMatchObject({ type: 'session.deleted', data: { projectId: project, title: null } });
    expect(await listDeliveries(again(lister), deaf.id)).toEqual([]);
  });

  test("an unknown delivery, or another webhook's, is 404 Delivery not found", async () => {
    const { webhook } = await hook(owner, { projectId: personal });
    const other = (await hook(owner, { projectId: personal })).webhook;
    await upload(owner, personal);
    const [delivery] = await listDeliveries(again(owner), webhook.id);
    for (const id of ['999999999', 'abc', '1e3', '-1', '9999999999999999']) {
      expect([id, await failure(resendDelivery(again(owner), webhook.id, id))]).toEqual([id, DELIVERY_NOT_FOUND]);
    }
    const otherDelivery = (await listDeliveries(again(owner), other.id))[0];
    expect(otherDelivery.eventId).toBe(delivery.eventId);
    expect(await failure(resendDelivery(again(owner), webhook.id, otherDelivery.id))).toEqual(DELIVERY_NOT_FOUND);
  });

  test('a disabled webhook resends nothing (409) and says why it is disabled', async () => {
    const { webhook } = await hook(owner, { projectId: personal });
    await upload(owner, personal);
    const [delivery] = await listDeliveries(again(owner), webhook.id);
    await disableWebhook(h.deps.db.writes, webhook.id, 'The receiver answered 410 Gone');
    expect(await failure(resendDelivery(again(owner), webhook.id, delivery.id))).toEqual({ code: 'CONFLICT', message: 'Webhook is disabled' });
    expect(await getWebhook(again(owner), webhook.id)).toMatchObject({ disabled: true, disabledReason: 'The receiver answered 410 Gone' });
    expect((await listDeliveries(again(owner), webhook.id))[0]).toMatchObject({ id: delivery.id, status: 'skipped' });
  });
});
