/**
 * searchSessions starts its database re-check when the search port reports the page's sessions
 * (onRanked), before the port has marked them, and re-checks the returned page itself when the
 * port did not report it or reported other sessions. The caller's scopes come from the memberships
 * read with their credential, else (a context built outside a request) from a read before the port
 * is asked. No database or engine: a fake port and fake read handles that record what they were
 * asked (the real ones: search-teams.test.ts, teams.test.ts).
 */
import type { Sql } from '../../src/data/sql';
import type { SearchHit, SearchPage, SearchPort, SearchRequest } from '../../src/search/engine/port';
import type { Ctx, Deps } from '../../src/services/context';
import { searchSessions } from '../../src/services/search';

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

test('a context without memberships (built outside a request) reads them before the port is asked, every time', async () => {
  const events: string[] = [];
  let teams: string[] = [];
  const writes = {
    query: <T>(sql: string) => {
      expect(sql).toMatch(/team_members/);
      events.push(`memberships ${teams.join(',')}`);
      return Promise.resolve(teams.map((teamId) => ({ teamId, role: 'member' })) as T[]);
    },
  };
  const port: SearchPort = {
    start: () => Promise.resolve(),
    stop: () => Promise.resolve(),
    isHealthy: () => true,
    search: (request) => {
      events.push(`search ${request.scopes.join(',')}`);
      return Promise.resolve({ total: 1, hits: [hit('s-1', 0.9)] });
    },
  };
  const deps = { db: { reads: fakeReads([]), writes }, search: port } as unknown as Deps;
  const search = async (user: Ctx['user'], teamIds?: string[]) => {
    events.length = 0;
    return searchSessions({ deps, user, log: undefined } as unknown as Ctx, { query: 'words', filters: teamIds ? { teamIds } : undefined });
  };

  teams = ['t-1'];
  await search({ id: 'u', keyId: null });
  expect(events).toEqual(['memberships t-1', 'search u,t-1']);
  // Removed from the team: the next search reads that, and asks without it.
  teams = [];
  expect((await search({ id: 'u', keyId: null })).results.map((r) => r.sessionId)).toEqual(['s-1']);
  expect(events).toEqual(['memberships ', 'search u']);
  teams = ['t-1', 't-2'];
  await search({ id: 'u', keyId: null }, ['t-2']);
  expect(events).toEqual(['memberships t-1,t-2', 'search t-2']);
  // Memberships read with the credential: no read of its own.
  await search({ id: 'u', keyId: null, memberships: 't-3:viewer' });
  expect(events).toEqual(['search u,t-3']);
});
