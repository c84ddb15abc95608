/**
 * Trusted documents (docs/graphql.md): a request may send `documentId: "sha256:<hex>"` instead of
 * the query text. The console's documents come with its build (codegen's client preset writes
 * them, the service loads them at start); other apps register theirs through
 * `POST /api/v1/graphql/documents` (instance administrators). An id is the sha256 of its text,
 * checked at registration, so a text found under an id never changes: lookups are cached.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parse, validate, type GraphQLSchema } from 'graphql';
import { AppError, invalid } from '../errors';
import { isPlainObject } from '../domain/validation';
import { addDocuments, documentText, listDocuments } from '../data/graphql-documents';
import type { Ctx, Deps } from './context';

export const DOCUMENT_ID = /^sha256:[0-9a-f]{64}$/;
/** The app name the console's own documents are listed under. */
const CONSOLE_APP = 'session-archive-console';
const NAME = /^[A-Za-z0-9][A-Za-z0-9._@/-]{0,63}$/;
const MAX_DOCUMENTS = 1_000;
const CACHE_SIZE = 5_000;

const documentIdOf = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

/** The console's documents: web/src/gql/persisted-documents.json, or the copy the build puts in dist/. */
export function loadConsoleDocuments(start = __dirname): Map<string, string> {
  for (let dir = start; ; dir = path.dirname(dir)) {
    for (const file of [path.join(dir, 'web/src/gql/persisted-documents.json'), path.join(dir, 'dist/console-documents.json')]) {
      if (fs.existsSync(file)) return new Map(Object.entries(JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>));
    }
    if (path.dirname(dir) === dir) return new Map();
  }
}

export interface TrustedDocuments {
  /** The text of a registered document, or null. */
  text(id: string): Promise<string | null>;
}

export function trustedDocuments(deps: Pick<Deps, 'db'>, builtIn: Map<string, string>): TrustedDocuments {
  const cache = new Map<string, string>();
  return {
    async text(id) {
      const known = builtIn.get(id) ?? cache.get(id);
      if (known !== undefined) return known;
      const stored = await documentText(deps.db.reads, id);
      if (stored !== null) {
        if (cache.size >= CACHE_SIZE) cache.clear();
        cache.set(id, stored);
      }
      return stored;
    },
  };
}

const onlyAdmins = (ctx: Ctx) => {
  if (ctx.user.role !== 'admin') throw new AppError('FORBIDDEN', 'Only instance administrators can manage trusted documents');
};

/** Registers an app version's documents: every id the sha256 of its text, every text valid against the running schema. */
export async function registerDocuments(ctx: Ctx, schema: GraphQLSchema, body: unknown): Promise<{ app: string; version: string; count: number }> {
  onlyAdmins(ctx);
  if (ctx.user.readOnly) throw new AppError('FORBIDDEN', 'This key is read-only');
  if (!isPlainObject(body)) throw invalid('Body must be a JSON object: {app, version, documents}');
  const { app, version, documents } = body;
  if (typeof app !== 'string' || !NAME.test(app)) throw invalid('app must be 1-64 letters, digits and . _ @ / -, starting with a letter or digit');
  if (typeof version !== 'string' || !NAME.test(version)) throw invalid('version must be 1-64 letters, digits and . _ @ / -, starting with a letter or digit');
  if (!isPlainObject(documents)) throw invalid('documents must be an object of {"sha256:<hex>": "<document>"}');
  const entries = Object.entries(documents);
  if (entries.length === 0 || entries.length > MAX_DOCUMENTS) throw invalid(`documents must hold 1 to ${MAX_DOCUMENTS} documents`);
  const wrongIds: string[] = [];
  const invalidDocuments: Array<{ id: string; message: string }> = [];
  for (const [id, text] of entries) {
    if (typeof text !== 'string' || !DOCUMENT_ID.test(id) || documentIdOf(text) !== id) {
      wrongIds.push(id.slice(0, 80));
      continue;
    }
    try {
      const errors = validate(schema, parse(text));
      if (errors.length) invalidDocuments.push({ id, message: errors[0].message });
    } catch (err) {
      invalidDocuments.push({ id, message: err instanceof Error ? err.message : 'not a GraphQL document' });
    }
  }
  if (wrongIds.length)
    throw invalid(`Each id must be "sha256:" and the sha256 of its document's text; these are not: ${wrongIds.slice(0, 20).join(', ')}`, {
      ids: wrongIds.slice(0, 100),
    });
  if (invalidDocuments.length) {
    throw invalid(
      `Documents that do not validate against the schema: ${invalidDocuments
        .slice(0, 20)
        .map((d) => `${d.id} (${d.message})`)
        .join('; ')}`,
      {
        documents: invalidDocuments.slice(0, 100),
      },
    );
  }
  await addDocuments(ctx.deps.db.writes, app, version, entries as Array<[string, string]>);
  return { app, version, count: entries.length };
}

interface ListedDocument {
  app: string;
  version: string;
  id: string;
  document: string;
  createdAt: Date | null;
}

/** The registered documents (and the console's, listed under its name), of one app or all. */
export async function registeredDocuments(ctx: Ctx, app: unknown, builtIn: Map<string, string>): Promise<ListedDocument[]> {
  onlyAdmins(ctx);
  if (app !== undefined && (typeof app !== 'string' || !NAME.test(app))) throw invalid('app must be 1-64 letters, digits and . _ @ / -');
  const stored = await listDocuments(ctx.deps.db.reads, app ?? null);
  const console: ListedDocument[] =
    app === undefined || app === CONSOLE_APP
      ? [...builtIn].map(([id, document]) => ({ app: CONSOLE_APP, version: 'built-in', id, document, createdAt: null }))
      : [];
  return [...console, ...stored];
}
