import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * schema.graphql → src/generated/graphql.ts (resolver types) and web/src/gql/ (the console's typed
 * documents: codegen's client preset over every `graphql(`...`)` in web/src). Mappers let resolvers return the
 * services' rows and DTOs; the generated types then ask for resolvers only where they differ.
 */
const config: CodegenConfig = {
  schema: 'schema.graphql',
  overwrite: true,
  generates: {
    'src/generated/graphql.ts': {
      plugins: ['typescript', 'typescript-resolvers'],
      config: {
        contextType: '../graphql/context#GraphqlContext',
        enumsAsTypes: true,
        useTypeImports: true,
        useIndexSignature: false,
        mappers: {
          Project: '../services/presenters/project#ProjectDto',
          Session: '../domain/session-row#SessionRow',
          SessionMetadata: '../services/sessions#SessionMetadata as SessionMetadataModel',
          SessionConnection: '../graphql/models#SessionConnectionModel',
          SessionEdge: '../graphql/models#SessionEdgeModel',
          ProjectStats: '../graphql/models#ProjectStatsModel',
          Stats: '../graphql/models#StatsModel',
          Analytics: '../graphql/models#AnalyticsModel',
          SearchSessionsResult: '../graphql/models#SearchSessionsModel',
          SearchResult: '../graphql/models#SearchResultModel',
          MatchingExchange: '../graphql/models#MatchingExchangeModel',
          ApiKey: '../services/presenters/key#ApiKeyDto',
          CreatedApiKey: '../graphql/models#CreatedApiKeyModel',
          DeletedProject: '../graphql/models#DeletedProjectModel',
          SessionExchangePage: '../services/exchanges#ExchangePage',
          SessionExchange: '../services/exchanges#ExchangeItem',
          Team: '../services/presenters/team#TeamDto',
          TeamMember: '../services/presenters/team#MemberDto',
          TeamInvitation: '../services/presenters/team#InvitationDto',
          CreatedTeamInvitation: '../graphql/models#CreatedTeamInvitationModel',
          User: '../graphql/models#UserModel',
          Owner: '../graphql/models#OwnerModel',
          Share: '../services/presenters/share#ShareDto',
          RelatedSession: '../services/related#RelatedSession as RelatedSessionModel',
        },
        scalars: { ID: 'string' },
      },
    },
    // The console, as a frontend team would use the API: typed documents, sent by plain fetch as
    // trusted documents (their sha256 ids; the texts go to persisted-documents.json, which the
    // service loads as the console's registered documents).
    'web/src/gql/': {
      documents: ['web/src/**/*.{ts,tsx}', '!web/src/gql/**'],
      preset: 'client',
      presetConfig: { fragmentMasking: false, persistedDocuments: { hashAlgorithm: 'sha256' } },
      config: { documentMode: 'string', enumsAsTypes: true, useTypeImports: true, scalars: { ID: 'string' } },
    },
  },
};

export default config;
