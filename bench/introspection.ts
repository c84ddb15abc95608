/**
 * The rule "Introspection counts": how long introspection holds the event loop, and what the
 * cost guard (src/graphql/operation-limits.ts) decides, for the standard introspection query, the most a
 * query may now ask for (two full introspections), and the aliased repeats that were answered
 * before introspection counted. graphql-js answers introspection itself (no resolvers of ours), so
 * executing the documents on the schema built from schema.graphql is the work the server does.
 * Run: npx tsx bench/introspection.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildSchema, execute, getIntrospectionQuery, Kind, parse, validate, type OperationDefinitionNode } from 'graphql';
import { checkOperation } from '../src/graphql/operation-limits';

const schema = buildSchema(fs.readFileSync(path.join(__dirname, '..', 'schema.graphql'), 'utf8'));
const standard = getIntrospectionQuery({
  descriptions: true,
  specifiedByUrl: true,
  directiveIsRepeatable: true,
  schemaDescription: true,
  inputValueDeprecation: true,
});
const fragments = standard.slice(standard.indexOf('fragment'));
const aliased = (n: number) => `query { ${Array.from({ length: n }, (_v, i) => `s${i}: __schema { types { ...FullType } }`).join(' ')} }\n${fragments}`;
const small = (n: number) =>
  `{ ${Array.from({ length: n }, (_v, i) => `a${i}: __schema { types { name fields { name args { name } type { name ofType { name } } } } }`).join(' ')} }`;

const cases: Array<[string, string]> = [
  ['standard introspection (GraphiQL/codegen options)', standard],
  ['2 aliased full introspections', aliased(2)],
  ['3 aliased full introspections', aliased(3)],
  ['100 aliased full introspections', aliased(100)],
  ['100 aliased small introspections', small(100)],
];

for (const [label, text] of cases) {
  const doc = parse(text);
  if (validate(schema, doc).length) throw new Error(`${label}: invalid document`);
  const op = doc.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION) as OperationDefinitionNode;
  let verdict: string;
  try {
    verdict = `allowed (cost ${checkOperation(schema, doc, op, {}).toLocaleString('en')})`;
  } catch (err) {
    verdict = `refused: ${(err as Error).message}`;
  }
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    const r = execute({ schema, document: doc }) as { data?: unknown };
    JSON.stringify(r.data);
    times.push(performance.now() - t);
  }
  times.sort((x, y) => x - y);
  console.log(`${label}: ${verdict}; execution + serialisation median ${times[2].toFixed(1)} ms (max ${times[4].toFixed(1)})`);
}
