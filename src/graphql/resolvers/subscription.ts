import type { SubscriptionResolvers } from '../../generated/graphql';
import { invalid } from '../../errors';
import { sessionChanges, type SessionChange } from '../../services/live';
import type { GraphqlContext } from '../context';
import { contextForEvent } from '../live';

export const Subscription = {
  sessionsChanged: {
    subscribe: (_p: unknown, { projectId }: { projectId?: string | null }, gql: GraphqlContext) => {
      if (!gql.live) return Promise.reject(invalid('Subscriptions run on /api/v1/graphql/stream'));
      return sessionChanges(gql.ctx, gql.live, projectId ?? null);
    },
    resolve: (change: SessionChange, _args: unknown, gql: GraphqlContext) => {
      contextForEvent(gql);
      return change;
    },
  },
} satisfies SubscriptionResolvers;
