/**
 * Index work (search_outbox rows; see docs/search.md). Ops: 'upsert' (session created or changed;
 * 'upsert_large' when its markdown is too large to be indexed whole, so that it goes to the
 * worker's main lane), 'delete' (session deleted), 'delete_project' (sessionId null); 'reindex' is
 * written by a rebuild only (push the session whole, unchanged fragments included); 'compact'
 * moves a session into the main index (changed fragments only: compaction of the recent index,
 * and filling a new main index).
 */
export type OutboxOp = 'upsert' | 'upsert_large' | 'delete' | 'delete_project' | 'reindex' | 'compact';

/** Markdown of at most this many characters is indexed as one document (src/domain/search-documents.ts). */
export const WHOLE_MAX = 64 * 1024;

/** The op of a session upsert, by the size of its markdown. */
export const upsertOp = (markdownSize: number): OutboxOp => (markdownSize > WHOLE_MAX ? 'upsert_large' : 'upsert');

/** A unit of work that failed this many times moves to search_outbox_dead, so it never holds back later work. */
export const MAX_ATTEMPTS = 10;
