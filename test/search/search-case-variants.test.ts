/**
 * Totals are exact for case variants of tags, models, branches and devices, on the real engine:
 * the engine compares strings without case, so documents carry each value's exact key and the
 * list filters compare those (as they do for projects and uploaders). `Tag` is not `tag`, in the
 * hits and in `total`, in the recent index and after compaction into the main one.
 */
import { newSessionId, startSearchHarness, type SearchHarness, randomWord } from '../support/meili-harness';

let h: SearchHarness;

beforeAll(async () => {
  h = await startSearchHarness();
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const word = () => randomWord();

test('a filter on one case variant selects and counts only the sessions carrying it', async () => {
  const user = await h.user();
  const w = word();
  const upper = newSessionId();
  const lower = newSessionId();
  await h.put(user, 'variants', upper, {
    name: 'upper',
    markdown: `# upper\n\n${w}\n`,
    metadata: { tags: ['Tag'], llmModels: ['Model-X'], gitBranches: ['Feature/Login'], deviceId: 'Device-A' },
  });
  await h.put(user, 'variants', lower, {
    name: 'lower',
    markdown: `# lower\n\n${w}\n`,
    metadata: { tags: ['tag'], llmModels: ['model-x'], gitBranches: ['feature/login'], deviceId: 'device-a' },
  });
  const check = async () => {
    const cases: Array<[Record<string, string[]>, string[]]> = [
      [{ tags: ['Tag'] }, [upper]],
      [{ tags: ['tag'] }, [lower]],
      [{ tags: ['Tag', 'tag'] }, [upper, lower]],
      [{ llmModels: ['Model-X'] }, [upper]],
      [{ llmModels: ['model-x'] }, [lower]],
      [{ gitBranches: ['Feature/Login'] }, [upper]],
      [{ gitBranches: ['feature/login'] }, [lower]],
      [{ deviceIds: ['Device-A'] }, [upper]],
      [{ deviceIds: ['device-a'] }, [lower]],
      [{ tags: ['TAG'] }, []],
    ];
    for (const [filters, ids] of cases) {
      const r = await h.find(user, w, filters);
      expect([filters, r.total, r.results.map((x) => x.sessionId).sort()]).toEqual([filters, ids.length, [...ids].sort()]);
    }
  };
  await h.settle();
  await check();
  // The same once both sit in the main index.
  await h.search.compact(0);
  await h.settle();
  await check();
});
