/**
 * Trusted documents apps registered: the statements on `graphql_documents` (each document under
 * its app, version and id, the sha256 of its text).
 */
import { marks, type Sql } from './sql';

interface StoredDocument {
  app: string;
  version: string;
  id: string;
  document: string;
  createdAt: Date;
}

/** Adds an app version's documents (a document already registered under it is kept). */
export async function addDocuments(db: Sql, app: string, version: string, documents: ReadonlyArray<readonly [id: string, text: string]>): Promise<void> {
  for (let i = 0; i < documents.length; i += 200) {
    const part = documents.slice(i, i + 200);
    await db.execute(
      `INSERT IGNORE INTO graphql_documents (app, version, id, document) VALUES ${part.map(() => `(${marks(4)})`).join(', ')}`,
      ...part.flatMap(([id, text]) => [app, version, id, text]),
    );
  }
}

/** The text registered under an id (any app: equal ids are equal texts), or null. */
export async function documentText(db: Sql, id: string): Promise<string | null> {
  const rows = await db.query<{ document: string }>('SELECT document FROM graphql_documents WHERE id = ? LIMIT 1', id);
  return rows[0]?.document ?? null;
}

/** The registered documents, of one app or of all, by app, version and id. */
export function listDocuments(db: Sql, app: string | null): Promise<StoredDocument[]> {
  return app === null
    ? db.query<StoredDocument>('SELECT app, version, id, document, createdAt FROM graphql_documents ORDER BY app, version, id LIMIT 10000')
    : db.query<StoredDocument>('SELECT app, version, id, document, createdAt FROM graphql_documents WHERE app = ? ORDER BY version, id LIMIT 10000', app);
}
