/**
 * The resolver map: one file per GraphQL type. `satisfies CompleteResolvers` (complete.ts) makes
 * the compiler require a resolver for every Query and Mutation field and for every field a type's
 * model does not provide as the schema wants it, so leaving one out fails `npm run typecheck`.
 */
import type { Resolvers } from '../../generated/graphql';
import { Analytics } from './analytics';
import type { CompleteResolvers } from './complete';
import { Mutation } from './mutation';
import { Project } from './project';
import { ProjectStats } from './project-stats';
import { Query } from './query';
import { MatchingExchange, SearchResult } from './search-result';
import { Session } from './session';
import { SessionExchange } from './session-exchange';
import { SessionMetadata } from './session-metadata';
import { Share } from './share';
import { Stats } from './stats';
import { Subscription } from './subscription';
import { Owner, Team, TeamInvitation, TeamMember } from './team';

export const resolvers: Resolvers = {
  Query,
  Mutation,
  Subscription,
  Project,
  ProjectStats,
  Session,
  SessionExchange,
  SessionMetadata,
  SearchResult,
  MatchingExchange,
  Stats,
  Analytics,
  Team,
  TeamMember,
  TeamInvitation,
  Owner,
  Share,
} satisfies CompleteResolvers;
