/** The fixture written to a search harness (one user, one project), and a search over it by fixture id. */
import crypto from 'node:crypto';
import type { SearchHarness } from '../../test/support/meili-harness';
import { loadSessions } from './fixture';

export const FIXTURE_PROJECT = 'relevance';

/** Session ids are UUIDs: one derived from the fixture id, the same on every run. */
const uuidOf = (id: string) => {
  const h = crypto.createHash('sha256').update(id).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

export async function loadFixture(
  h: Pick<SearchHarness, 'user' | 'put' | 'settle' | 'find' | 'search'>,
): Promise<{ sessions: number; find: (q: string) => Promise<string[]> }> {
  const sessions = loadSessions();
  const user = await h.user();
  const idOf = new Map<string, string>();
  for (const s of sessions) {
    const uuid = uuidOf(s.id);
    idOf.set(uuid, s.id);
    await h.put(user, FIXTURE_PROJECT, uuid, { name: s.name, markdown: s.markdown, metadata: { llmModels: ['claude-sonnet-4-5'] } });
  }
  await h.settle(120_000);
  // Moved to the main index, where an archive's sessions are (fresh writes wait in the recent one).
  await h.search.compact(0);
  await h.settle(120_000);
  return { sessions: sessions.length, find: async (q) => (await h.find(user, q, undefined, 10)).results.map((r) => idOf.get(r.sessionId) ?? r.sessionId) };
}
