/**
 * The Idempotency-Key rule at the service layer (no HTTP): a key is claimed once per user and
 * scope; a repeat of the same request gets the kept response, another request with the key 422;
 * a repeat of a request still running waits for it; released, expired and abandoned claims free
 * the key.
 */
import crypto from 'node:crypto';
import * as store from '../../src/data/idempotency';
import { claimIdempotencyKey, completeIdempotencyClaim, deleteExpiredClaims, releaseIdempotencyClaim } from '../../src/services/idempotency';
import { failure, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let alice: ServiceUser;
let bob: ServiceUser;

const MISMATCH = { code: 'UNPROCESSABLE', message: 'Idempotency key reused with a different request' };
const scopeOf = (request: string) => crypto.createHash('sha256').update(request).digest('hex');
const SCOPE = scopeOf('POST /api/v1/projects');
const RESPONSE = { status: 201, json: '{"success":true,"data":{"id":"p1"}}', etag: '"e1"' };
const newKey = () => crypto.randomUUID();
const HOUR = 60 * 60 * 1000;

/** The claim as the service holds it after `claimIdempotencyKey` returned it as the caller's. */
async function claimMine(user: ServiceUser, key: string, fingerprint: string, scope = SCOPE) {
  const c = await claimIdempotencyKey(user, scope, key, fingerprint);
  if (!c.mine) throw new Error('expected a claim of our own');
  return c.held;
}

beforeAll(async () => {
  h = await startServices();
  [alice, bob] = await Promise.all(['alice', 'bob'].map((n) => h.user(n)));
});
afterAll(() => h?.close());

describe('one key, one request', () => {
  test('the first request claims the key; a repeat of it gets the kept response back', async () => {
    const key = newKey();
    const held = await claimMine(alice, key, 'fp-1');
    await completeIdempotencyClaim(alice, held, RESPONSE);
    const repeat = await claimIdempotencyKey(alice, SCOPE, key, 'fp-1');
    expect(repeat).toEqual({ mine: false, claim: expect.objectContaining({ fingerprint: 'fp-1', status: 201, responseJson: RESPONSE.json, etag: '"e1"' }) });
  });

  test('the same key with another request is refused (422), whether the first has answered or not', async () => {
    const done = newKey();
    await completeIdempotencyClaim(alice, await claimMine(alice, done, 'fp-a'), RESPONSE);
    expect(await failure(claimIdempotencyKey(alice, SCOPE, done, 'fp-b'))).toEqual(MISMATCH);
    const pending = newKey();
    await claimMine(alice, pending, 'fp-a');
    expect(await failure(claimIdempotencyKey(alice, SCOPE, pending, 'fp-b'))).toEqual(MISMATCH);
  });

  test("keys are each user's own, per method and path: the same key elsewhere is a new claim", async () => {
    const key = newKey();
    await completeIdempotencyClaim(alice, await claimMine(alice, key, 'fp-alice'), RESPONSE);
    expect((await claimIdempotencyKey(bob, SCOPE, key, 'fp-bob')).mine).toBe(true);
    expect((await claimIdempotencyKey(alice, scopeOf('PATCH /api/v1/projects/p1'), key, 'fp-other')).mine).toBe(true);
    // Alice's own claim is untouched by those.
    expect((await claimIdempotencyKey(alice, SCOPE, key, 'fp-alice')).mine).toBe(false);
  });

  test('a released claim frees the key: a repeat acts again', async () => {
    const key = newKey();
    await releaseIdempotencyClaim(alice, await claimMine(alice, key, 'fp-1'));
    expect((await claimIdempotencyKey(alice, SCOPE, key, 'fp-2')).mine).toBe(true);
  });

  test('a release after the response was kept frees nothing', async () => {
    const key = newKey();
    const held = await claimMine(alice, key, 'fp-1');
    await completeIdempotencyClaim(alice, held, RESPONSE);
    await releaseIdempotencyClaim(alice, held);
    expect((await claimIdempotencyKey(alice, SCOPE, key, 'fp-1')).mine).toBe(false);
  });
});

describe('a repeat while the first request runs', () => {
  test('waits for its response and replays it', async () => {
    const key = newKey();
    const held = await claimMine(alice, key, 'fp-1');
    let settled = false;
    const repeat = claimIdempotencyKey(alice, SCOPE, key, 'fp-1').finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(settled).toBe(false);
    await completeIdempotencyClaim(alice, held, RESPONSE);
    expect(await repeat).toEqual({ mine: false, claim: expect.objectContaining({ status: 201, responseJson: RESPONSE.json }) });
  });

  test('gets the key itself when the first request lets it go', async () => {
    const key = newKey();
    const held = await claimMine(alice, key, 'fp-1');
    const repeat = claimIdempotencyKey(alice, SCOPE, key, 'fp-1');
    await new Promise((r) => setTimeout(r, 50));
    await releaseIdempotencyClaim(alice, held);
    expect((await repeat).mine).toBe(true);
  });
});

describe('claims that end', () => {
  const id = (user: ServiceUser, key: string): store.ClaimId => ({ userId: user.user.id, scope: SCOPE, key });

  test('a claim older than 24 hours is forgotten: the key is free, for another request too', async () => {
    const key = newKey();
    await store.insertClaim(h.deps.db.writes, id(alice, key), 'fp-old', new Date(Date.now() - 24 * HOUR - 60_000));
    expect((await claimIdempotencyKey(alice, SCOPE, key, 'fp-new')).mine).toBe(true);
  });

  test('a pending claim abandoned for over 10 minutes is taken over; a kept response of an hour ago still replays', async () => {
    const abandoned = newKey();
    await store.insertClaim(h.deps.db.writes, id(alice, abandoned), 'fp-1', new Date(Date.now() - 11 * 60_000));
    expect((await claimIdempotencyKey(alice, SCOPE, abandoned, 'fp-1')).mine).toBe(true);
    const answered = newKey();
    const createdAt = new Date(Date.now() - HOUR);
    await store.insertClaim(h.deps.db.writes, id(alice, answered), 'fp-1', createdAt);
    await store.completeClaim(h.deps.db.writes, id(alice, answered), createdAt, RESPONSE);
    expect(await claimIdempotencyKey(alice, SCOPE, answered, 'fp-1')).toEqual({ mine: false, claim: expect.objectContaining({ status: 201 }) });
    expect(await failure(claimIdempotencyKey(alice, SCOPE, answered, 'fp-2'))).toEqual(MISMATCH);
  });

  test('the request whose abandoned claim was taken over cannot write its response into the new one', async () => {
    const key = newKey();
    const createdAt = new Date(Date.now() - 11 * 60_000);
    await store.insertClaim(h.deps.db.writes, id(alice, key), 'fp-1', createdAt);
    const fresh = await claimMine(alice, key, 'fp-1');
    await completeIdempotencyClaim(alice, { id: id(alice, key), createdAt }, { status: 500, json: '{}', etag: null });
    expect((await store.claimOf(h.deps.db.writes, id(alice, key)))?.status).toBeNull();
    await completeIdempotencyClaim(alice, fresh, RESPONSE);
    expect((await store.claimOf(h.deps.db.writes, id(alice, key)))?.status).toBe(201);
  });

  test("housekeeping drops everyone's claims past 24 hours and keeps the others", async () => {
    const old = newKey();
    const recent = newKey();
    await store.insertClaim(h.deps.db.writes, id(bob, old), 'fp', new Date(Date.now() - 25 * HOUR));
    await claimMine(bob, recent, 'fp');
    await deleteExpiredClaims(alice);
    expect(await store.claimOf(h.deps.db.writes, id(bob, old))).toBeUndefined();
    expect(await store.claimOf(h.deps.db.writes, id(bob, recent))).toBeDefined();
  });
});
