/** Helpers several resolver files share. */
import type { SessionOrder } from '../../generated/graphql';
import { encodeCursor } from '../../services/session-lists';
import type { SessionRow } from '../../domain/session-row';
import type { GraphqlContext } from '../context';
import type { SessionConnectionModel } from '../models';

/** Memoises a thunk so that several fields of one object share one statement. */
export function once<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= f());
}

/** A Relay page of rows (`more`: the service read one row past the page, and found it). */
export function connection(rows: SessionRow[], more: boolean, order: SessionOrder, after: string | null | undefined): SessionConnectionModel {
  const edges = rows.map((node) => ({ cursor: encodeCursor(order, node), node }));
  return {
    edges,
    pageInfo: {
      hasNextPage: more,
      hasPreviousPage: Boolean(after),
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
}

/** Rows read by a list also answer later `session` lookups of the same operation. */
export function primeSessions<T extends SessionRow>(gql: GraphqlContext, rows: T[]): T[] {
  for (const r of rows) gql.loaders.session.prime({ projectId: r.projectId, sessionId: r.id }, r);
  return rows;
}
