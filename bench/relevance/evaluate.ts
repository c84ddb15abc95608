/**
 * Scores a search over the relevance fixture: for each question, where its expected session comes
 * in the results (first 10), summed up per kind as recall@1, recall@3, recall@10 and MRR (the
 * mean of 1/position, 0 when not in the first 10). Used by the bench (bench/relevance/run.ts)
 * and by the test that keeps the committed figure (test/search/search-relevance.test.ts).
 */
import { QUESTIONS, type Question, type QuestionKind } from './questions';

export const KINDS: QuestionKind[] = ['plain', 'keyword', 'identifier', 'agent'];

export interface Scores {
  questions: number;
  recallAt1: number;
  recallAt3: number;
  recallAt10: number;
  mrr: number;
  /** Questions answered with no result at all. */
  empty: number;
}

export interface Outcome {
  question: Question;
  /** 1-based position of the expected session, null when not in the first 10. */
  position: number | null;
  /** The sessions found (fixture ids), best first. */
  found: string[];
  error?: string;
}

export interface Evaluation {
  byKind: Record<QuestionKind, Scores>;
  overall: Scores;
  outcomes: Outcome[];
}

const round = (x: number) => Math.round(x * 1000) / 1000;

function scoresOf(outcomes: Outcome[]): Scores {
  const n = outcomes.length;
  const within = (k: number) => outcomes.filter((o) => o.position !== null && o.position <= k).length / Math.max(1, n);
  return {
    questions: n,
    recallAt1: round(within(1)),
    recallAt3: round(within(3)),
    recallAt10: round(within(10)),
    mrr: round(outcomes.reduce((s, o) => s + (o.position ? 1 / o.position : 0), 0) / Math.max(1, n)),
    empty: outcomes.filter((o) => o.found.length === 0).length,
  };
}

/**
 * Asks every question with `find` (the fixture ids of the first 10 sessions found, best first);
 * a question the search refuses counts as answered with nothing.
 */
export async function evaluate(find: (query: string) => Promise<string[]>, questions: Question[] = QUESTIONS): Promise<Evaluation> {
  const outcomes: Outcome[] = [];
  for (const question of questions) {
    let found: string[] = [];
    let error: string | undefined;
    try {
      found = (await find(question.q)).slice(0, 10);
    } catch (err) {
      error = String((err as Error)?.message ?? err);
    }
    const at = found.indexOf(question.expect);
    outcomes.push({ question, position: at < 0 ? null : at + 1, found, error });
  }
  const byKind = Object.fromEntries(KINDS.map((k) => [k, scoresOf(outcomes.filter((o) => o.question.kind === k))])) as Record<QuestionKind, Scores>;
  return { byKind, overall: scoresOf(outcomes), outcomes };
}

/** The table the bench prints, one row per kind and one overall. */
export function report(e: Evaluation): string[] {
  const rows = [...KINDS.map((k) => [k, e.byKind[k]] as const), ['overall', e.overall] as const];
  const f = (x: number) => x.toFixed(3);
  return [
    'kind        questions  recall@1  recall@3  recall@10  MRR    empty',
    ...rows.map(
      ([k, s]) =>
        `${k.padEnd(11)} ${String(s.questions).padStart(9)}  ${f(s.recallAt1).padStart(8)}  ${f(s.recallAt3).padStart(8)}  ${f(s.recallAt10).padStart(9)}  ${f(s.mrr)}  ${String(s.empty).padStart(5)}`,
    ),
  ];
}

/** Questions whose expected session is not in the first 3: what to look at. */
export function misses(e: Evaluation): string[] {
  return e.outcomes
    .filter((o) => o.position === null || o.position > 3)
    .map(
      (o) =>
        `  [${o.question.kind}] ${JSON.stringify(o.question.q)} → expected ${o.question.expect} at ${o.position ?? '-'}; got ${o.error ? `error: ${o.error}` : o.found.slice(0, 3).join(', ') || 'nothing'}`,
    );
}
