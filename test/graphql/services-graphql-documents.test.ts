/**
 * Trusted documents' rules, pinned at the service layer (no HTTP): only instance administrators
 * register and list them, a read-only key registers nothing, every id is the sha256 of its text and
 * every text valid against the running schema (all or nothing), the console's built-in documents are
 * listed under its own name, and a registered text is found by its id (an unknown id: null).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildSchema } from 'graphql';
import { registerDocuments, registeredDocuments, trustedDocuments } from '../../src/services/graphql-documents';
import { ROOT } from '../support/paths';
import { again, failure, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

const schema = buildSchema(fs.readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8'));
const idOf = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
const DOC = 'query AppProjects { projects { id name } }';
const OTHER = 'query AppNames { projects { name } }';
const BUILT_IN = new Map([[idOf('query Console { me { id } }'), 'query Console { me { id } }']]);
const ADMINS_ONLY = { code: 'FORBIDDEN', message: 'Only instance administrators can manage trusted documents' };
const invalid = (message: unknown) => ({ code: 'VALIDATION_ERROR', message });

let h: ServiceHarness;
let admin: ServiceUser;
let readOnlyAdmin: ServiceUser;
let member: ServiceUser;

beforeAll(async () => {
  h = await startServices({ MEILI_URL: 'http://127.0.0.1:9' });
  admin = await h.user('admin', { role: 'admin' });
  readOnlyAdmin = { ...admin, user: { ...admin.user, readOnly: true } };
  member = await h.user('member');
});
afterAll(() => h?.close());

test('a member may neither register nor list; a read-only admin key may list but not register', async () => {
  const body = { app: 'mobile', version: '1.0.0', documents: { [idOf(DOC)]: DOC } };
  expect(await failure(registerDocuments(again(member), schema, body))).toEqual(ADMINS_ONLY);
  expect(await failure(registeredDocuments(again(member), undefined, BUILT_IN))).toEqual(ADMINS_ONLY);
  expect(await failure(registerDocuments(again(readOnlyAdmin), schema, body))).toEqual({ code: 'FORBIDDEN', message: 'This key is read-only' });
  expect(await registeredDocuments(again(readOnlyAdmin), 'mobile', BUILT_IN)).toEqual([]);
});

test.each([
  ['a body that is not an object', [], 'Body must be a JSON object: {app, version, documents}'],
  ['an app name with a space', { app: 'my app', version: '1', documents: {} }, expect.stringMatching(/^app must be 1-64 letters/)],
  ['no version', { app: 'mobile', documents: {} }, expect.stringMatching(/^version must be 1-64 letters/)],
  ['documents as a list', { app: 'mobile', version: '1', documents: [DOC] }, 'documents must be an object of {"sha256:<hex>": "<document>"}'],
  ['no documents', { app: 'mobile', version: '1', documents: {} }, 'documents must hold 1 to 1000 documents'],
])('%s → 400', async (_what, body, message) => {
  expect(await failure(registerDocuments(again(admin), schema, body))).toEqual(invalid(message));
});

test('an id that is not the sha256 of its text, or a text the schema refuses, fails the whole registration', async () => {
  const wrongId = { app: 'mobile', version: '2', documents: { [idOf(DOC)]: DOC, [idOf('something else')]: OTHER } };
  expect(await failure(registerDocuments(again(admin), schema, wrongId))).toEqual(
    invalid(`Each id must be "sha256:" and the sha256 of its document's text; these are not: ${idOf('something else')}`),
  );
  const unknownField = 'query Bad { projects { noSuchField } }';
  const notValid = { app: 'mobile', version: '2', documents: { [idOf(DOC)]: DOC, [idOf(unknownField)]: unknownField } };
  expect(await failure(registerDocuments(again(admin), schema, notValid))).toEqual(
    invalid(expect.stringMatching(new RegExp(`^Documents that do not validate against the schema: ${idOf(unknownField)} \\(`))),
  );
  expect(await registeredDocuments(again(admin), 'mobile', new Map())).toEqual([]);
});

test('registered documents are listed by app, the console under its own name, and found by id', async () => {
  expect(await registerDocuments(again(admin), schema, { app: 'mobile', version: '3.1', documents: { [idOf(DOC)]: DOC, [idOf(OTHER)]: OTHER } })).toEqual({
    app: 'mobile',
    version: '3.1',
    count: 2,
  });
  const mobile = await registeredDocuments(again(admin), 'mobile', BUILT_IN);
  expect(mobile.map((d) => [d.app, d.version, d.id]).sort()).toEqual(
    [
      ['mobile', '3.1', idOf(DOC)],
      ['mobile', '3.1', idOf(OTHER)],
    ].sort(),
  );
  const all = await registeredDocuments(again(admin), undefined, BUILT_IN);
  expect(all).toContainEqual({
    app: 'session-archive-console',
    version: 'built-in',
    id: [...BUILT_IN.keys()][0],
    document: 'query Console { me { id } }',
    createdAt: null,
  });
  expect(all).toHaveLength(3);
  expect(await failure(registeredDocuments(again(admin), 'bad app', BUILT_IN))).toEqual(invalid('app must be 1-64 letters, digits and . _ @ / -'));

  const trusted = trustedDocuments(h.deps, BUILT_IN);
  expect(await trusted.text(idOf(DOC))).toBe(DOC);
  expect(await trusted.text([...BUILT_IN.keys()][0])).toBe('query Console { me { id } }');
  expect(await trusted.text(idOf('never registered'))).toBeNull();
});
