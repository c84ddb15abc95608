/** Helpers several resolver files share. */
import type { SessionOrder } from '../../generated/graphql';
import { encodeCursor } from '../../services/session-lists';
import type { SessionRow } from '../../services/sessions';
import type { GraphqlContext } from '../context';
import type { SessionConnectionModel } from '../models';

/** Memoises a thunk so that several fields of one object share one statement. */
export function once<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= f());
}

/** A Relay page from `first + 1` rows (the extra row only says that there is a next page). */
export function connection(rows: SessionRow[], order: SessionOrder, first: number, after: string | null | undefined): SessionConnectionModel {
  const more = rows.length > first;
  const page = more ? rows.slice(0, first) : rows;
  const edges = page.map((node) => ({ cursor: encodeCursor(order, node), node }));
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
