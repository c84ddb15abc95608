import type { SearchHit } from '../search/engine/port';
import type { ApiKeyDto } from '../services/presenters/key';
import type { InvitationDto, TeamDto } from '../services/presenters/team';
import type { ProjectDto } from '../services/presenters/project';
import type { SessionRow } from '../domain/session-row';
import type { AnalyticsRange, UserTotals } from '../services/stats';

/** What resolvers hand to the generated types (codegen mappers in codegen.ts). */
export interface SessionEdgeModel {
  cursor: string;
  node: SessionRow;
}

export interface SessionConnectionModel {
  edges: SessionEdgeModel[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

/** Project.stats: the fields resolve through per-request loaders keyed by project id. */
export interface ProjectStatsModel {
  projectId: string;
}

/** Query.stats: the totals come from one aggregate statement, run once when first asked for. */
export interface StatsModel {
  totals(): Promise<UserTotals>;
}

/** Query.analytics: the range, and the range's totals (one statement, run once when asked for). */
export interface AnalyticsModel {
  range: AnalyticsRange;
  totals(): Promise<{ totalSessions: number; totalProjects: number }>;
}

/** A search result: the session's row (its fields resolve as Session's do) with the hit beside it. */
export type SearchResultModel = SessionRow & {
  hit: Pick<SearchHit, 'projectId' | 'sessionId' | 'rank' | 'snippet' | 'matchingExchanges'>;
  /** Marks a matching exchange's snippet with the search's terms (one per search, shared by its results). */
  snippetOf: (content: string) => string;
};

/** A matching fragment and how to mark its snippet (only when asked for). */
export type MatchingExchangeModel = Omit<SearchHit['matchingExchanges'][number], 'start' | 'exchange'> & {
  start: number | null;
  exchange: number | null;
  snippetOf: (content: string) => string;
};

export interface SearchSessionsModel {
  total: number;
  results: SearchResultModel[];
}

export interface CreatedApiKeyModel {
  key: ApiKeyDto;
  token: string;
}

export interface DeletedProjectModel {
  project: ProjectDto;
  deletedAt: string;
}

export interface CreatedTeamInvitationModel {
  invitation: InvitationDto;
  url: string;
}

/** A user as teammates see them: id and display name. */
export interface UserModel {
  __typename: 'User';
  id: string;
  name: string;
}

/** Project.owner: the owning user, or the owning team (the caller's view of it). */
export type OwnerModel = UserModel | (TeamDto & { __typename: 'Team' });
