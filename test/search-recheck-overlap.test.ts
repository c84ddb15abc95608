/**
 * searchSessions starts its database re-check when the search port reports the page's sessions
 * (onRanked), before the port has marked them, and re-checks the returned page itself when the
 * port did not report it or reported other sessions. For a caller whose credential does not carry
 * their memberships, it asks the port with the scopes of their last search while it reads them,
 * and uses that answer only when the memberships give the same scopes. No database or engine: a
 * fake port and fake read handles that record what they were asked.
 */
import type { Sql } from '../src/data/sql';
import type { SearchHit, SearchPage, SearchPort, SearchRequest } from '../src/search/engine/port';
import type { Ctx, Deps } from '../src/services/context';
import { searchSessions } from '../src/services/search';

const hit = (sessionId: string, rank: number, contentDigest = `d-${sessionId}`): SearchHit => ({
  projectId: 'p',
  sessionId,
  rank,
  snippet: `<mark>${sessionId}</mark>`,
  matchingExchanges: [],
  contentDigest,
});

/** What a re-check returns for these ids: every one of them, except `missing`. */
function fakeReads(events: string[], missing: string[] = []): Sql {
  return {
    query: <T>(_sql: string, ...values: unknown[]) => {
      const ids = values.filter((v): v is string => typeof v === 'string' && v.startsWith('s-'));
      events.push(`recheck ${ids.join(',')}`);
      return Promise.resolve(ids.filter((id) => !missing.includes(id)).map((id) => ({ projectId: 'p', id, contentDigest: `d-${id}` })) as T[]);
    },
  } as unknown as Sql;
}

function ctxWith(search: (request: SearchRequest) => Promise<SearchPage>, reads: Sql): Ctx {
  const port: SearchPort = { start: () => Promise.resolve(), stop: () => Promise.resolve(), isHealthy: () => true, search };
  const deps = { db: { reads }, search: port } as unknown as Deps;
  return { deps, user: { id: 'u', keyId: 'k', memberships: '' }, log: undefined } as unknown as Ctx;
}

test('the re-check starts when the page is ranked, before the port has marked it; dropped hits stay out', async () => {
  const events: string[] = [];
  const page = [hit('s-1', 0.9), hit('s-2', 0.8), hit('s-3', 0.7)];
  const ctx = ctxWith(
    (request) => {
      request.onRanked?.(page);
      events.push('marked');
      return Promise.resolve({ total: 3, hits: page });
    },
    fakeReads(events, ['s-2']),
  );
  const res = await searchSessions(ctx, { query: 'words' });
  expect(events).toEqual(['recheck s-1,s-2,s-3', 'marked']);
  expect(res.total).toBe(3);
  expect(res.results.map((r) => [r.sessionId, r.snippet])).toEqual([
    ['s-1', '<mark>s-1</mark>'],
    ['s-3', '<mark>s-3</mark>'],
  ]);
});

test('a page with other sessions than the ones reported (a standby answered), or none reported, is re-checked itself', async () => {
  for (const reported of [[hit('s-9', 0.5)], null]) {
    const events: string[] = [];
    const page = [hit('s-1', 0.9), hit('s-2', 0.8, 'old digest')];
    const ctx = ctxWith((request) => {
      if (reported) request.onRanked?.(reported);
      return Promise.resolve({ total: 2, hits: page });
    }, fakeReads(events));
    const res = await searchSessions(ctx, { query: 'words' });
    expect(events).toEqual([...(reported ? ['recheck s-9'] : []), 'recheck s-1,s-2']);
    // A hit indexed from another version of the session is dropped.
    expect(res.results.map((r) => r.sessionId)).toEqual(['s-1']);
  }
});

test('memberships read per request: the search starts with the last scopes, and runs again when they changed', async () => {
  const events: string[] = [];
  let teams: string[] = [];
  const writes = {
    query: async <T>(sql: string) => {
      expect(sql).toMatch(/team_members/);
      // Answered after the port has been asked, when it is asked at the same time.
      await new Promise((resolve) => setImmediate(resolve));
      events.push(`memberships ${teams.join(',')}`);
      return teams.map((teamId) => ({ teamId, role: 'member' })) as T[];
    },
  };
  const page = [hit('s-1', 0.9)];
  const port: SearchPort = {
    start: () => Promise.resolve(),
    stop: () => Promise.resolve(),
    isHealthy: () => true,
    search: (request) => {
      events.push(`search ${request.scopes.join(',')}`);
      return Promise.resolve({ total: 1, hits: page });
    },
  };
  const deps = { db: { reads: fakeReads([]), writes }, search: port } as unknown as Deps;
  // A new request each time (memberships are read once per request, per user object).
  const search = async (teamIds?: string[]) => {
    events.length = 0;
    const ctx = { deps, user: { id: 'spec-user', keyId: 'k' }, log: undefined } as unknown as Ctx;
    return searchSessions(ctx, { query: 'words', filters: teamIds ? { teamIds } : undefined });
  };

  // Nothing known of this user yet: memberships first.
  await search();
  expect(events).toEqual(['memberships ', 'search spec-user']);
  // Known: the search starts first, and its answer is the one used.
  teams = ['t-1'];
  await search();
  expect(events).toEqual(['search spec-user', 'memberships t-1', 'search spec-user,t-1']);
  const res = await search();
  expect(events).toEqual(['search spec-user,t-1', 'memberships t-1']);
  expect(res.results.map((r) => r.sessionId)).toEqual(['s-1']);
  // Removed from the team: the guess had it, so the search runs again without it.
  teams = [];
  await search();
  expect(events).toEqual(['search spec-user,t-1', 'memberships ', 'search spec-user']);
  // Naming a team: the guess is narrowed the same way (here to nothing: the last search had no t-2).
  teams = ['t-1', 't-2'];
  await search(['t-2']);
  expect(events).toEqual(['memberships t-1,t-2', 'search t-2']);
  await search(['t-2']);
  expect(events).toEqual(['search t-2', 'memberships t-1,t-2']);
});
