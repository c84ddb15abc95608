// `npm run schema:lint`: lints schema.graphql only (docs/graphql.md). graphql-eslint's
// schema-recommended set (naming conventions, no redundant prefixes, …) plus descriptions
// required on every type, field, argument, enum value and directive.
import graphqlPlugin from '@graphql-eslint/eslint-plugin';

export default [
  {
    files: ['schema.graphql'],
    languageOptions: { parser: graphqlPlugin.parser, parserOptions: { graphQLConfig: { schema: 'schema.graphql' } } },
    plugins: { '@graphql-eslint': graphqlPlugin },
    rules: {
      ...graphqlPlugin.configs['flat/schema-recommended'].rules,
      // Off: `Session.sessionDataSize` keeps the field name the upload clients use.
      '@graphql-eslint/no-typename-prefix': 'off',
      // Entities carry `id: ID!`; these are value objects (counts, pages, wrappers) with no identity
      // of their own. A new object type is either an entity or gets added here, deliberately.
      '@graphql-eslint/strict-id-in-types': [
        'error',
        {
          acceptedIdNames: ['id'],
          acceptedIdTypes: ['ID'],
          exceptions: {
            types: ['SessionMetadata', 'PageInfo', 'CreatedApiKey', 'CreatedTeamInvitation', 'TeamMember', 'DeletedProject', 'Stats', 'Analytics', 'ProjectStats', 'SearchSessionsResult', 'SessionExchangePage', 'SessionExchange', 'SessionFacets'],
            suffixes: ['Count', 'Connection', 'Edge', 'Usage', 'Activity'],
          },
        },
      ],
      '@graphql-eslint/require-description': [
        'error',
        {
          types: true,
          rootField: true,
          FieldDefinition: true,
          InputValueDefinition: true,
          EnumValueDefinition: true,
          DirectiveDefinition: true,
        },
      ],
    },
  },
];
