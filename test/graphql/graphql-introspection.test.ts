/**
 * Introspection counts toward the GraphQL cost budget: the standard introspection
 * query that GraphiQL and code generators send stays allowed; aliased repeats of introspection,
 * which held the event loop for 0.4–0.7 s, are refused before execution like any query over the
 * budget (400 VALIDATION_ERROR).
 */
import { getIntrospectionQuery } from 'graphql';
import { startTestApp, type TestApp, type TestUser } from '../support/app';

let app: TestApp;
let a: TestUser;

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GRAPHQL_PER_HOUR: '100000' } });
  a = await app.createUser('a');
});
afterAll(() => app?.close());

test.each([
  ['the default options', {}],
  [
    'every option GraphiQL and codegen use',
    { descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true },
  ],
])('the standard introspection query with %s is answered', async (_label, options) => {
  const r = await app.gql(a, getIntrospectionQuery(options));
  expect(r.status).toBe(200);
  expect(r.body.errors).toBeUndefined();
  const names = r.body.data.__schema.types.map((t: { name: string }) => t.name);
  expect(names).toEqual(expect.arrayContaining(['Query', 'Mutation', 'Session', 'Project']));
});

test('small introspection (one type, __typename) is cheap and answered', async () => {
  const r = await app.gql(a, '{ __typename __type(name: "Session") { name fields { name type { name kind ofType { name } } } } }');
  expect(r.status).toBe(200);
  expect(r.body.data.__type.fields.length).toBeGreaterThan(5);
});

const refused = (r: { status: number; body: any }) => {
  expect(r.status).toBe(400);
  expect(r.body.data).toBeUndefined();
  expect(r.body.errors[0]).toMatchObject({ extensions: { code: 'VALIDATION_ERROR' }, message: 'Query is too expensive: cost exceeds the budget of 50000' });
};

test('100 aliased introspection fields are refused as over the budget', async () => {
  refused(
    await app.gql(
      a,
      `{ ${Array.from({ length: 100 }, (_v, i) => `a${i}: __schema { types { name fields { name args { name } type { name ofType { name } } } } }`).join(' ')} }`,
    ),
  );
});

test('aliased repeats of the full introspection query are refused', async () => {
  const standard = getIntrospectionQuery();
  const fragments = standard.slice(standard.indexOf('fragment'));
  refused(await app.gql(a, `query { ${Array.from({ length: 10 }, (_v, i) => `s${i}: __schema { types { ...FullType } }`).join(' ')} }\n${fragments}`));
});
