/** Session: the shared row mapping (session-fields.ts), plus sizes, findings and the paged read by exchange. */
import * as exchanges from '../../services/exchanges';
import { ExchangeArgs, parseInput } from '../../services/inputs';
import { redactionsOf } from '../../domain/redaction';
import { selects } from '../selection';
import type { ResolversOf } from './complete';
import { sessionFields } from './session-fields';

export const Session: ResolversOf<'Session'> = {
  ...sessionFields,
  rawDataSize: (r) => Number(r.rawDataSize),
  sessionDataSize: (r) => Number(r.sessionDataSize ?? 0),
  redactions: (r) => redactionsOf(r.redactionsJson),
  shares: (r, _a, { loaders }) => loaders.sessionShares.load({ projectId: r.projectId, sessionId: r.id }),
  async exchanges(r, { offset, limit }, gql, info) {
    const args = { ...parseInput(ExchangeArgs, { offset: offset ?? 0, limit: limit ?? 20 }), content: selects(info, ['exchanges', 'markdown']) };
    // A page of markdown is bounded before anything is read (the per-response content budget).
    if (args.content) gql.loaders.chargeContent(Math.min(Number(r.markdownSize), exchanges.PAGE_CONTENT_BYTES));
    // And a version not split into exchanges yet costs a scan of its markdown, bounded per operation.
    if (!exchanges.isIndexCached(r)) gql.loaders.chargeScan(Number(r.markdownSize));
    return exchanges.exchangePage(gql.ctx, r, args);
  },
};
