/** Session: the session presenter's fields (session-fields.ts and here), plus the shares and the paged read by exchange. */
import { PAGES } from '../../domain/pages';
import { sessionPermissions } from '../../services/access';
import * as exchanges from '../../services/exchanges';
import { ExchangeArgs, RelatedArgs } from '../../services/inputs';
import { parseInput } from '../../domain/inputs';
import { relatedTo } from '../../services/related';
import { sessionFields as present } from '../../services/presenters/session';
import { selects } from '../selection';
import type { ResolversOf } from './complete';
import { sessionFields } from './session-fields';
import { primeSessions } from './shared';

export const Session: ResolversOf<'Session'> = {
  ...sessionFields,
  rawDataSize: present.rawDataSize,
  sessionDataSize: present.sessionDataSize,
  redactions: present.redactions,
  viewerCan: (r, _a, { ctx }) => sessionPermissions(ctx, r),
  shares: (r, _a, { loaders }) => loaders.sessionShares.load({ projectId: r.projectId, sessionId: r.id }),
  // The row was read with the caller's access: its usage is theirs to read.
  usage: (r, _a, { loaders }) => loaders.sessionUsage.load({ projectId: r.projectId, sessionId: r.id }),
  async exchanges(r, { offset, limit }, gql, info) {
    const args = {
      ...parseInput(ExchangeArgs, { offset: offset ?? PAGES.exchangeOffset.def, limit: limit ?? PAGES.exchanges.def }),
      content: selects(info, ['exchanges', 'markdown']),
    };
    // A page of markdown is bounded before anything is read (the per-response content budget).
    if (args.content) gql.loaders.chargeContent(Math.min(r.markdownSize, exchanges.PAGE_CONTENT_BYTES));
    // And a version not split into exchanges yet costs a scan of its markdown, bounded per operation.
    if (!exchanges.isIndexCached(r)) gql.loaders.chargeScan(r.markdownSize);
    return exchanges.exchangePage(gql.ctx, r, args);
  },
  async related(r, { limit }, gql) {
    const args = parseInput(RelatedArgs, { limit: limit ?? PAGES.related.def });
    const found = await relatedTo(gql.ctx, r, args.limit);
    primeSessions(
      gql,
      found.map((f) => f.session),
    );
    return found;
  },
};
