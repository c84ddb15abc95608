/**
 * Search relevance on the project's fixture (bench/relevance): its sessions written through the
 * session service to a real engine, every question asked through searchSessions. Fails when
 * recall@3 falls more than 2 points below the committed figure (bench/relevance/baseline.json),
 * which `npm run bench -- --only=relevance` measures.
 */
import { evaluate, misses, type Evaluation } from '../../bench/relevance/evaluate';
import { loadFixture } from '../../bench/relevance/load';
import baseline from '../../bench/relevance/baseline.json';
import { startSearchHarness, type SearchHarness } from '../support/meili-harness';

let h: SearchHarness;
let result: Evaluation;

beforeAll(async () => {
  h = await startSearchHarness();
  const run = await loadFixture(h);
  result = await evaluate(run.find);
}, 180_000);
afterAll(() => h?.close());

const report = (what: string) => `${what}; not in the top 3:\n${misses(result).join('\n')}`;

test('recall@3 over every question stays within 2 points of the committed figure', () => {
  const floor = baseline.overall.recallAt3 - 0.02;
  const { recallAt3 } = result.overall;
  expect(recallAt3 >= floor ? 'kept' : report(`recall@3 ${recallAt3} is below ${floor.toFixed(3)}`)).toBe('kept');
});

test('no question comes back empty: each has its answer in the archive', () => {
  expect(result.outcomes.filter((o) => o.found.length === 0).map((o) => o.question.q)).toEqual([]);
});
