/** The GraphQL endpoint (src/graphql): one operation per POST; its schema is schema.graphql. */
import { defineRoute } from '../route';
import { z } from '../schemas/common';

const GraphqlError = z.object({
  message: z.string(),
  extensions: z.object({ code: z.string() }).loose().optional(),
  path: z.array(z.union([z.string(), z.int()])).optional(),
  locations: z.array(z.object({ line: z.int(), column: z.int() })).optional(),
});
const GraphqlResponse = z
  .object({ data: z.record(z.string(), z.unknown()).nullable().optional(), errors: z.array(GraphqlError).optional() })
  .meta({ id: 'GraphqlResponse', description: 'What the operation selected (`data`) and what went wrong (`errors`, each with `extensions.code`).' });

export const graphqlRoutes = {
  graphql: defineRoute({
    method: 'post',
    path: '/graphql',
    tag: 'GraphQL',
    auth: 'key',
    rateLimit: 'graphql',
    streams: true,
    summary: 'Run a GraphQL operation',
    description:
      'The schema is `schema.graphql` (introspection is on; `GET /api/v1/graphql` in a browser opens the playground). One operation per request (no batching), a body of at most `MAX_GRAPHQL_BODY_BYTES` (1 MiB), query text of at most 100 KB; its own rate limit per user (`RATE_LIMIT_GRAPHQL_PER_HOUR`). Errors, HTTP ones included, come as `{errors: [{message, extensions: {code}}]}`.',
    body: z.object({
      query: z.string(),
      operationName: z.string().nullable().optional(),
      variables: z.record(z.string(), z.unknown()).nullable().optional(),
    }),
    errorSchema: GraphqlResponse,
    responses: { 200: { description: 'The result (a resolver error is still a 200, in `errors`).', schema: GraphqlResponse } },
  }),
};
