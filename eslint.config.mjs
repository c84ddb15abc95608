// `npm run lint`: TypeScript (type-aware, typescript-eslint) over src, web, test, bench, scripts and the root configs,
// and `npm run schema:lint`: schema.graphql (graphql-eslint). Formatting is Prettier's job
// (`npm run format:check`), so no stylistic rules here.
import graphqlPlugin from '@graphql-eslint/eslint-plugin';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

// Everywhere: typescript-eslint's type-aware `recommendedTypeChecked`, unchanged except for the
// unused-variable rule below. Floating and misused promises are errors: fire-and-forget is written
// `void promise`, everything else is awaited or given a rejection handler.
const typescript = tseslint.config(
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'web/**/*.{ts,tsx,mts}', 'codegen.ts', 'prisma.config.ts'],
    ignores: ['src/generated/**', 'web/src/gql/**', 'web/src/openapi/**'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A leading underscore marks a binding that is there on purpose but not read: a property
      // taken out of an object so that `...rest` goes without it, a tuple slot, or a parameter a
      // signature needs (Express tells error handlers apart by their four parameters).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // Tests and benchmarks read HTTP, GraphQL and MCP answers with `JSON.parse` / `res.json()`,
    // which are `any` by nature, and assert on them field by field (`expect(body.data.x).toBe(…)`):
    // the assertion is the check, and typing every answer would only restate it. So here the
    // no-unsafe-* family and no-explicit-any are off; the rest of the set (promises, unused
    // variables, awaits) stays on. Server, console and scripts code keeps them all: there a value
    // from outside is `unknown` and gets narrowed.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);

// The console: eslint-plugin-react-hooks' recommended set, which in v7 holds the classic hook
// rules and the React Compiler's rules. rules-of-hooks and exhaustive-deps are errors (the latter
// is only a warning in the preset, and a warning would not fail CI).
const react = {
  files: ['web/**/*.tsx'],
  plugins: { 'react-hooks': reactHooks },
  rules: {
    ...reactHooks.configs.recommended.rules,
    'react-hooks/exhaustive-deps': 'error',
    // Off: the console does not build with the React Compiler, and its pages load their data in an
    // effect keyed on the route (reset the previous page's rows and error, then fetch) — the
    // pattern this compiler rule reports. Without the compiler there is no cascade to avoid beyond
    // one extra render, and the alternative (a data-fetching layer or remounting by key) is a
    // rewrite of every page, not a lint fix.
    'react-hooks/set-state-in-effect': 'off',
  },
};

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
          types: [
            'SessionMetadata',
            'PageInfo',
            'CreatedApiKey',
            'CreatedTeamInvitation',
            'TeamMember',
            'DeletedProject',
            'Stats',
            'Analytics',
            'ProjectStats',
            'SearchSessionsResult',
            'SessionExchangePage',
            'SessionExchange',
            'SessionFacets',
            'RelatedSession',
            'RelatedExchange',
            'UsageReport',
            'UsageGroup',
            'SessionChange',
          ],
          suffixes: ['Count', 'Connection', 'Edge', 'Usage', 'Activity', 'Permissions'],
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

export default [{ ignores: ['src/generated/**', 'web/src/gql/**', 'dist/**', 'node_modules/**'] }, ...typescript, react, graphqlSchema];
