/**
 * Page sizes and their defaults live in src/domain/pages.ts; schema.graphql states the same
 * defaults for its readers (introspection, the console's codegen). Every integer argument default
 * of the schema is one of PAGES' defaults, named here, so that changing one without the other fails.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildSchema, isObjectType, isScalarType, getNamedType } from 'graphql';
import { PAGES } from '../src/domain/pages';

const EXPECTED: Record<string, number> = {
  'Query.sessions.limit': PAGES.sessions.def,
  'Query.sessionsConnection.first': PAGES.sessions.def,
  'Query.searchSessions.limit': PAGES.search.def,
  'Query.searchSessions.offset': PAGES.searchOffset.def,
  'Query.sessionFacets.limit': PAGES.facets.def,
  'Project.sessions.limit': PAGES.sessions.def,
  'Project.sessionsConnection.first': PAGES.sessions.def,
  'ProjectStats.sessionsByDay.days': PAGES.days.def,
  'ProjectStats.topTags.limit': PAGES.topValues.def,
  'Session.exchanges.offset': PAGES.exchangeOffset.def,
  'Session.exchanges.limit': PAGES.exchanges.def,
  'Stats.topLLMModels.limit': PAGES.topValues.def,
};

test("every integer argument default of schema.graphql is PAGES' default", () => {
  const schema = buildSchema(fs.readFileSync(path.resolve(__dirname, '../schema.graphql'), 'utf8'));
  const found: Record<string, unknown> = {};
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      for (const arg of field.args) {
        const named = getNamedType(arg.type);
        if (isScalarType(named) && named.name === 'Int' && arg.defaultValue !== undefined) found[`${type.name}.${field.name}.${arg.name}`] = arg.defaultValue;
      }
    }
  }
  expect(found).toEqual(EXPECTED);
});
