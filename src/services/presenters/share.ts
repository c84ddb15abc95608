/** How a share link is shown to its creator: REST's `Share` and GraphQL's `Share` (whose resolvers read this object). */
import type { z } from 'zod';
import { Audience as AudienceShape, type Share } from '../../api/schemas/shares';
import type { ShareListRow } from '../../data/shares';
import { sessionTitle } from '../sessions';

export type Audience = z.infer<typeof AudienceShape>;

/** REST's `Share` schema is the type. */
export type ShareDto = z.input<typeof Share>;

/** `url`: the link (it carries a MAC keyed by the server's secret, so the service makes it). */
export const presentShare = (row: ShareListRow, url: string): ShareDto => ({
  id: row.id,
  url,
  projectId: row.projectId,
  sessionId: row.sessionId,
  sessionTitle: sessionTitle({ userTitle: row.sessionUserTitle, name: row.sessionName, metadataJson: row.sessionMetadataJson }),
  createdAt: row.createdAt.toISOString(),
  snapshotAt: row.snapshotAt.toISOString(),
  expiresAt: row.expiresAt ? row.expiresAt.toISOString() : null,
  audience: row.audience as Audience,
  hiddenExchanges: JSON.parse(row.hiddenJson) as number[],
  exchangeCount: row.exchangeCount,
  views: row.views,
});
