/**
 * Service-level tests: the services on a fresh, migrated database, called with real contexts and
 * no HTTP. The search engine is not started (index work stays in the outbox table).
 */
import { loadConfig } from '../../src/config';
import { AppError } from '../../src/errors';
import { createDeps, type AppDeps } from '../../src/deps';
import { createLogger } from '../../src/logger';
import { operatorCtx, publicCtx, type Ctx, type OperatorCtx, type PublicCtx } from '../../src/services/context';
import { createProject } from '../../src/services/projects';
import { addMember, createTeam } from '../../src/services/teams';
import { createUser } from '../../src/services/users';
import { createTestDatabase, type TestDatabase } from './db';
import { testDataDir } from './meili-engine';

export interface ServiceUser extends Ctx {
  email: string;
}

export interface ServiceHarness {
  deps: AppDeps;
  db: TestDatabase;
  /** The admin CLI's context. */
  operator: OperatorCtx;
  /** Someone not signed in. */
  anonymous: PublicCtx;
  /** A new user (by the operator) and their context, as a request signed in with a key would carry it. */
  user(name: string, opts?: { role?: 'admin' | 'member'; readOnly?: boolean; password?: string }): Promise<ServiceUser>;
  close(): Promise<void>;
}

let seq = 0;

/**
 * The same caller in a new request: team memberships are read once per request (per user
 * object), so a test that changes them asks again through this.
 */
/** The domain error a service call fails with, as `{code, message}` (a call that succeeds fails the test). */
export async function failure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('expected the call to fail');
}

/** The refusal of a caller with no access at all (the interface document's words). */
export const FORBIDDEN = { code: 'FORBIDDEN', message: 'Insufficient permissions' };

/** A refusal that says why in words. */
export const refused = (message: string) => ({ code: 'FORBIDDEN', message });

export const VIEWER_READS_ONLY = refused("Viewers of a team can only read its projects: ask one of the team's admins for the member role");
export const ACCOUNT_ADMINS_ONLY = refused("Only the service's administrators can manage accounts");

export const again = <T extends Ctx>(ctx: T): T => ({ ...ctx, user: { ...ctx.user } });

export async function startServices(env: Record<string, string> = {}): Promise<ServiceHarness> {
  const db = await createTestDatabase('sa_services');
  const config = loadConfig({
    DATABASE_URL: db.url,
    DATA_DIR: testDataDir(),
    JWT_SECRET: 'test-secret-that-is-long-enough',
    LOG_LEVEL: 'silent',
    NAMESPACE: db.name,
    OFFLOAD_THREADS: '0',
    ...env,
  });
  const deps = createDeps(config, createLogger(config.logLevel));
  const operator = operatorCtx(deps.db, config);
  return {
    deps,
    db,
    operator,
    anonymous: publicCtx(deps),
    async user(name, opts = {}) {
      const email = `${name}-${process.pid}-${++seq}@example.test`;
      const u = await createUser(operator, email, name, { role: opts.role ?? 'member', password: opts.password });
      return { deps, log: deps.logger, email, user: { id: u.id, keyId: null, role: u.role, ...(opts.readOnly ? { readOnly: true } : {}) } };
    },
    async close() {
      await deps.close();
      await db.drop();
    },
  };
}

/** The cast most service tests play with: an owner of a personal project, a team's admin, member and viewer, an outsider. */
export interface Cast {
  owner: ServiceUser;
  admin: ServiceUser;
  member: ServiceUser;
  viewer: ServiceUser;
  outsider: ServiceUser;
  /** The owner's project "Personal". */
  personal: string;
  /** The team "Team" (admin, member, viewer) and its project "Shared". */
  teamId: string;
  teamProject: string;
}

export async function castOf(h: ServiceHarness): Promise<Cast> {
  const [owner, admin, member, viewer, outsider] = await Promise.all(['owner', 'admin', 'member', 'viewer', 'outsider'].map((n) => h.user(n)));
  const personal = (await createProject(owner, { name: 'Personal' })).id;
  const teamId = (await createTeam(admin, { name: 'Team' })).id;
  await addMember(again(admin), teamId, { email: member.email, role: 'member' });
  await addMember(again(admin), teamId, { email: viewer.email, role: 'viewer' });
  const teamProject = (await createProject(again(admin), { name: 'Shared', teamId })).id;
  return { owner, admin, member, viewer, outsider, personal, teamId, teamProject };
}
