import { truncateIp } from '../../src/domain/request-origin';
import { AUDIT_ACTIONS, recordAudit, type AuditAction } from '../../src/services/audit';
import { startServices, type ServiceHarness } from '../support/services';

let h: ServiceHarness;
beforeAll(async () => {
  h = await startServices();
});
afterAll(() => h?.close());

const entries = () => h.deps.db.pool.query<Record<string, unknown>[]>("SELECT * FROM audit_entries WHERE action <> 'user.create' ORDER BY id");

describe('truncateIp', () => {
  it.each([
    ['203.0.113.77', '203.0.113.0/24'],
    ['::ffff:198.51.100.9', '198.51.100.0/24'],
    ['2001:db8:85a3:8d3:1319:8a2e:370:7348', '2001:db8:85a3::/48'],
    ['2001:db8::1', '2001:db8:0::/48'],
    ['::1', '0:0:0::/48'],
    ['fe80::1%eth0', 'fe80:0:0::/48'],
    ['not an address', null],
    [undefined, null],
  ])('%s → %s', (ip, want) => expect(truncateIp(ip)).toBe(want));
});

describe('recordAudit', () => {
  it('appends an entry labelled with the actor, inside the caller’s transaction when given', async () => {
    const alice = await h.user('alice');
    await recordAudit(alice, { action: 'key.create', target: { type: 'key', id: 'k1' }, detail: { name: 'laptop', token: 'x', newPassword: 'y' } });
    await recordAudit(h.operator, { action: 'user.disable', target: { type: 'user', id: alice.user.id }, result: 'failure' });
    const conn = await h.deps.db.pool.getConnection();
    try {
      await conn.beginTransaction();
      const tx = {
        isSql: true as const,
        query: (q: string, ...v: unknown[]) => conn.query(q, v),
        execute: async (q: string, ...v: unknown[]) => Number((await conn.query(q, v)).affectedRows),
      };
      await recordAudit(h.anonymous, { action: 'sign_in', target: { type: 'user' }, result: 'failure' }, tx);
      await conn.rollback();
    } finally {
      await conn.release();
    }
    const rows = await entries();
    expect(rows.map((r) => [r.action, r.actorUserId, r.actorLabel, r.targetType, r.targetId, r.result, r.detail])).toEqual([
      ['key.create', alice.user.id, alice.email, 'key', 'k1', 'success', '{"name":"laptop"}'],
      ['user.disable', null, 'operator', 'user', alice.user.id, 'failure', null],
    ]);
  });

  it('names every action once', () => {
    const a: AuditAction = 'sign_in';
    expect(new Set(AUDIT_ACTIONS).size).toBe(AUDIT_ACTIONS.length);
    expect(AUDIT_ACTIONS).toContain(a);
  });
});
