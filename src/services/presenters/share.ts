/** How a share link is shown to its creator: REST's `Share` and GraphQL's `Share` (whose resolvers read this object). */
import type { ShareListRow } from '../../data/shares';
import { sessionTitle } from '../sessions';

export const AUDIENCES = ['public', 'signed-in'] as const;
export type Audience = (typeof AUDIENCES)[number];

export interface ShareDto {
  id: string;
  url: string;
  projectId: string;
  sessionId: string;
  /** The session's display title now (its user title, else `metadata.title`, else its name). */
  sessionTitle: string;
  createdAt: string;
  /** When the snapshot was taken (creation or the last refresh). */
  snapshotAt: string;
  expiresAt: string | null;
  audience: Audience;
  hiddenExchanges: number[];
  exchangeCount: number;
  views: number;
}

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
