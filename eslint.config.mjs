// `npm run lint`: TypeScript (type-aware, typescript-eslint) over src, web, test, bench and scripts,
// and `npm run schema:lint`: schema.graphql (graphql-eslint). Formatting is Prettier's job
// (`npm run format:check`), so no stylistic rules here.
import graphqlPlugin from '@graphql-eslint/eslint-plugin';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

const typescript = tseslint.config({
  files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'web/**/*.{ts,tsx,mts}'],
  ignores: ['src/generated/**', 'web/src/gql/**'],
  extends: [...tseslint.configs.recommendedTypeChecked],
  languageOptions: {
    parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
  },
  rules: {},
});

const react = { files: ['web/**/*.tsx'], plugins: { 'react-hooks': reactHooks }, rules: reactHooks.configs.recommended.rules };

const graphqlSchema = {
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
  };

export default [{ ignores: ["src/generated/**", "web/src/gql/**", "dist/**", "node_modules/**"] }, ...typescript, react, graphqlSchema];
