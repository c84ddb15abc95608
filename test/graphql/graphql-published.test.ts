/**
 * The schema, published (docs/graphql.md): GET /api/v1/graphql/schema.graphql is the SDL the
 * service runs, with a strong ETag (sha256 of the text) and 304 on If-None-Match, public unless
 * GRAPHQL_SCHEMA_PUBLIC=false; GET /api/v1/graphql/changelog.json is the committed changelog,
 * which is what the history of schema.graphql makes.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildSchema, getIntrospectionQuery, buildClientSchema, printSchema, lexicographicSortSchema } from 'graphql';
import { buildChangelog, changelogText } from '../../scripts/schema-changelog';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { ROOT } from '../support/paths';

const SDL = fs.readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8');

describe('public (the default)', () => {
  let app: TestApp;
  let a: TestUser;
  beforeAll(async () => {
    app = await startTestApp();
    a = await app.createUser('a');
  });
  afterAll(() => app?.close());

  test('the SDL is served as text, byte for byte the schema the service runs, without a credential', async () => {
    const r = await app.request('GET', '/api/v1/graphql/schema.graphql');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.text).toBe(SDL);
    expect(r.headers.etag).toBe(`"${createHash('sha256').update(SDL).digest('hex')}"`);
    // The schema the service answers introspection with is the published one.
    const intro = await app.gql(a, getIntrospectionQuery({ schemaDescription: true, inputValueDeprecation: true, directiveIsRepeatable: true }));
    const served = printSchema(lexicographicSortSchema(buildClientSchema(intro.body.data)));
    expect(served).toBe(printSchema(lexicographicSortSchema(buildSchema(r.text))));
  });

  test('If-None-Match with the ETag (or a weak form of it, or one of a list) answers 304 with no body; another tag 200', async () => {
    const etag = (await app.request('GET', '/api/v1/graphql/schema.graphql')).headers.etag as string;
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const r = await app.request('GET', '/api/v1/graphql/schema.graphql', { headers: { 'If-None-Match': inm } });
      expect([inm, r.status, r.raw.length]).toEqual([inm, 304, 0]);
      expect(r.headers.etag).toBe(etag);
    }
    const other = await app.request('GET', '/api/v1/graphql/schema.graphql', { headers: { 'If-None-Match': '"0000"' } });
    expect(other.status).toBe(200);
    expect(other.text).toBe(SDL);
  });

  test('the changelog is the committed file, newest first, each change with a level, a coordinate and a message', async () => {
    const r = await app.request('GET', '/api/v1/graphql/changelog.json');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.text).toBe(fs.readFileSync(path.join(ROOT, 'schema.changelog.json'), 'utf8'));
    const entries = r.body.entries as Array<{ version: number; date: string; changes: Array<Record<string, string>> }>;
    expect(entries.length).toBeGreaterThan(1);
    expect(entries.map((e) => e.version)).toEqual(entries.map((_e, i) => entries.length - i));
    for (const e of entries) {
      expect(e.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      for (const c of e.changes) {
        expect(['BREAKING', 'DANGEROUS', 'SAFE']).toContain(c.level);
        expect(c.coordinate).toMatch(/^[A-Za-z_][\w.]*$/);
        expect(c.message.length).toBeGreaterThan(0);
      }
    }
    const again = await app.request('GET', '/api/v1/graphql/changelog.json', { headers: { 'If-None-Match': r.headers.etag as string } });
    expect(again.status).toBe(304);
  });

  test('other paths under the GraphQL endpoint still need a credential', async () => {
    const r = await app.request('GET', '/api/v1/graphql/schema.json');
    expect(r.status).toBe(401);
  });
});

describe('GRAPHQL_SCHEMA_PUBLIC=false', () => {
  let app: TestApp;
  let a: TestUser;
  beforeAll(async () => {
    app = await startTestApp({ env: { GRAPHQL_SCHEMA_PUBLIC: 'false' } });
    a = await app.createUser('a');
  });
  afterAll(() => app?.close());

  test('the SDL and the changelog need a key: 401 without one, 200 with one', async () => {
    for (const p of ['/api/v1/graphql/schema.graphql', '/api/v1/graphql/changelog.json']) {
      const anonymous = await app.request('GET', p);
      expect([p, anonymous.status]).toEqual([p, 401]);
      expect(anonymous.text).not.toContain('type Query');
      const signed = await app.request('GET', p, { token: a.token });
      expect([p, signed.status]).toEqual([p, 200]);
    }
  });
});

test('the committed changelog is what the history of schema.graphql makes', async () => {
  const made = await buildChangelog(ROOT);
  // A clone without the whole history cannot remake it (schema:check says so and skips).
  if (!made) return;
  expect(fs.readFileSync(path.join(ROOT, 'schema.changelog.json'), 'utf8')).toBe(changelogText(made));
});
