/**
 * One shape per edge, checked: schema.graphql (the published GraphQL contract) and REST's zod
 * schemas (src/api/schemas, which the presenters return and MCP and the archive derive from) name
 * the same fields with the same nullability, except where the maps below say why not. A field
 * added to one and not the other fails here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildSchema, getNullableType, isListType, isNonNullType, isObjectType, type GraphQLObjectType } from 'graphql';
import { z } from 'zod';
import * as R from '../../src/api/schemas/resources';
import * as Sh from '../../src/api/schemas/shares';
import * as T from '../../src/api/schemas/teams';
import { ARCHIVE_LEFT_OUT, SessionJsonSchema } from '../../src/api/schemas/archive';
import { openApiDocument } from '../../src/api/openapi';
import { ROW_KEYS } from '../../src/domain/session-row';
import { SESSION_LEFT_OUT, sessionOutput } from '../../src/mcp/schemas';
import { ROOT } from '../support/paths';

const gql = buildSchema(fs.readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8'));

/** An object schema under its `.nullable()`/`.optional()` wrappers and array. */
function objectOf(schema: z.ZodType): z.ZodObject {
  let s: z.ZodType = schema;
  for (;;) {
    if (s instanceof z.ZodNullable || s instanceof z.ZodOptional) s = s.unwrap() as z.ZodType;
    else if (s instanceof z.ZodArray) s = s.element as z.ZodType;
    else break;
  }
  if (!(s instanceof z.ZodObject)) throw new Error('not an object schema');
  return s;
}

interface Twin {
  /** The GraphQL object type. */
  type: string;
  zod: z.ZodType;
  /** GraphQL fields REST has no field for, and why. */
  onlyGraphql?: Record<string, string>;
  /** REST fields GraphQL has no field for, and why. */
  onlyRest?: Record<string, string>;
  /** Fields whose nullability differs on purpose, and why. */
  nullability?: Record<string, string>;
}

/** Every GraphQL object type with a REST twin. */
const TWINS: Twin[] = [
  {
    type: 'Session',
    zod: R.Session,
    onlyGraphql: {
      displayTitle: 'REST clients apply the title rule themselves (userTitle, metadata.title, name)',
      project: 'a resolver; REST has it only in SessionDetail',
      markdownContent: 'a resolver; REST serves it as its own representation (and in SessionDetail)',
      exchanges: 'a resolver with arguments; REST has GET …/exchanges',
      shares: 'a resolver; REST has GET …/shares',
      related: 'a resolver with arguments; REST has GET …/related',
      usage: 'a resolver; REST has it in SessionDetail',
      viewerCan: "the caller's permissions, GraphQL only",
    },
    onlyRest: { clientId: "= id: the upload CLI's name for it" },
    nullability: { etag: 'REST leaves it out of GET /sessions/recent; GraphQL always resolves it' },
  },
  {
    type: 'SessionMetadata',
    zod: R.SessionMetadata,
    onlyGraphql: {
      machineName: "an extra key clients send: REST's catch-all carries it",
      title: "an extra key clients send: REST's catch-all carries it",
      summary: "an extra key clients send: REST's catch-all carries it",
    },
  },
  { type: 'RedactionCount', zod: R.Session.shape.redactions },
  { type: 'SessionUsage', zod: R.SessionUsage },
  { type: 'SessionModelUsage', zod: objectOf(R.SessionUsage).shape.byModel },
  {
    type: 'Project',
    zod: R.Project,
    onlyGraphql: {
      viewerCan: "the caller's permissions, GraphQL only",
      sessionsConnection: 'a resolver with arguments; REST has GET …/sessions',
      stats: 'a resolver; REST has no project statistics',
    },
    onlyRest: { lastUpdated: '= lastActivity: the name the upload CLI reads' },
    nullability: { sessions: "GraphQL's is a resolver with arguments; REST's is present only with resumable=true" },
  },
  { type: 'Share', zod: Sh.Share, onlyGraphql: { session: 'a resolver: the shared session, null once it is gone' } },
  {
    type: 'Team',
    zod: T.Team,
    onlyGraphql: { members: 'a resolver; REST has GET /teams/{id}', invitations: 'a resolver; REST has GET /teams/{id}/invitations' },
  },
  { type: 'TeamMember', zod: T.TeamMember, onlyGraphql: { email: '= user.email, kept for clients that read it here' } },
  { type: 'TeamInvitation', zod: T.TeamInvitation },
  { type: 'ApiKey', zod: R.ApiKey },
  {
    type: 'SessionExchangePage',
    zod: R.SessionExchangePage,
    onlyRest: {
      projectId: "GraphQL's page is a field of its Session",
      sessionId: "GraphQL's page is a field of its Session",
      etag: "GraphQL's page is a field of its Session (Session.etag)",
      markdownSize: "GraphQL's page is a field of its Session (Session.markdownSize)",
    },
  },
  {
    type: 'SessionExchange',
    zod: R.SessionExchange,
    nullability: { markdown: "REST leaves it out with content=false; GraphQL's query selects it or not" },
  },
];

const acceptsNull = (s: z.ZodType) => s.safeParse(null).success || s.safeParse(undefined).success;

describe.each(TWINS)('GraphQL $type and its REST schema', (twin) => {
  const type = gql.getType(twin.type);
  const shape = objectOf(twin.zod).shape as Record<string, z.ZodType>;

  test('name the same fields (or say why not)', () => {
    expect(isObjectType(type)).toBe(true);
    const fields = Object.keys((type as GraphQLObjectType).getFields());
    const rest = Object.keys(shape);
    expect(fields.filter((f) => !rest.includes(f) && !(f in (twin.onlyGraphql ?? {})))).toEqual([]);
    expect(rest.filter((f) => !fields.includes(f) && !(f in (twin.onlyRest ?? {})))).toEqual([]);
    // The maps name only real differences.
    expect(Object.keys(twin.onlyGraphql ?? {}).filter((f) => !fields.includes(f) || rest.includes(f))).toEqual([]);
    expect(Object.keys(twin.onlyRest ?? {}).filter((f) => !rest.includes(f) || fields.includes(f))).toEqual([]);
  });

  test('agree on which fields may be null', () => {
    const fields = (type as GraphQLObjectType).getFields();
    const differ: string[] = [];
    for (const [name, field] of Object.entries(fields)) {
      if (!(name in shape) || name in (twin.nullability ?? {})) continue;
      if (!isNonNullType(field.type) !== acceptsNull(shape[name])) differ.push(name);
      // A list's items too.
      const list = getNullableType(field.type);
      const zodItems = objectOrArrayItems(shape[name]);
      if (isListType(list) && zodItems && !isNonNullType(list.ofType) !== acceptsNull(zodItems)) differ.push(`${name}[]`);
    }
    expect(differ).toEqual([]);
    expect(Object.keys(twin.nullability ?? {}).filter((f) => !(f in fields) || !(f in shape))).toEqual([]);
  });
});

function objectOrArrayItems(s: z.ZodType): z.ZodType | null {
  let t: z.ZodType = s;
  while (t instanceof z.ZodNullable || t instanceof z.ZodOptional) t = t.unwrap() as z.ZodType;
  return t instanceof z.ZodArray ? (t.element as z.ZodType) : null;
}

/**
 * Adding a field to sessions (docs/development.md): the one zod `Session` carries it to every edge.
 * Each check below fails until the step that carries it there is done.
 */
describe('a field of REST’s Session reaches every edge', () => {
  const fields = Object.keys(R.Session.shape);

  /** Columns of a session's row that clients do not read under their own name, and why. */
  const ROW_ONLY: Record<string, string> = {
    userId: 'the owner scope (the project says whose it is)',
    contentDigest: 'what decides whether content is written again',
    sessionDataDigest: 'part of the tag and of the content digest',
    clientName: 'a column copy of metadata.clientName, for filters',
    clientVersion: 'a column copy of metadata.clientVersion, for filters',
    agentName: 'a column copy of metadata.agentName, for filters',
    deviceId: 'a column copy of metadata.deviceId, for filters',
    metadataJson: 'shown as metadata',
    redactionsJson: 'shown as redactions (rule and count)',
    costUsd: "shown in usage (SessionDetail, GraphQL's Session.usage), and the cost order",
  };

  test('a column of the row is a field of Session, or says why not', () => {
    expect(ROW_KEYS.filter((c) => !fields.includes(c) && !(c in ROW_ONLY))).toEqual([]);
    expect(Object.keys(ROW_ONLY).filter((c) => fields.includes(c) || !(ROW_KEYS as readonly string[]).includes(c))).toEqual([]);
  });

  test('the OpenAPI document (GET /api/v1/openapi.json)', () => {
    const doc = openApiDocument() as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
    expect(Object.keys(doc.components.schemas.Session.properties)).toEqual(fields);
  });

  test("schema.graphql's Session (through the GraphQL twin above)", () => {
    const gqlFields = Object.keys((gql.getType('Session') as GraphQLObjectType).getFields());
    const onlyRest = TWINS.find((t) => t.type === 'Session')!.onlyRest!;
    expect(fields.filter((f) => !gqlFields.includes(f) && !(f in onlyRest))).toEqual([]);
  });

  test("MCP's get_session output, derived from Session", () => {
    expect(fields.filter((f) => !(f in sessionOutput.shape) && !(f in SESSION_LEFT_OUT))).toEqual([]);
    // What it leaves out is left out, and is still a field of Session.
    expect(Object.keys(SESSION_LEFT_OUT).filter((f) => f in sessionOutput.shape || !fields.includes(f))).toEqual([]);
  });

  test("the archive's session.json, derived from Session", () => {
    expect(fields.filter((f) => !(f in SessionJsonSchema.shape) && !(f in ARCHIVE_LEFT_OUT))).toEqual([]);
    expect(Object.keys(ARCHIVE_LEFT_OUT).filter((f) => f in SessionJsonSchema.shape || !fields.includes(f))).toEqual([]);
  });

  // The console's GraphQL types are those of its documents (codegen's client preset): a field reaches
  // them when a page selects it, from schema.graphql's Session (checked above).
  test("the console's generated REST types (npm run generate)", () => {
    const openapiTypes = fs.readFileSync(path.join(ROOT, 'web/src/openapi/schema.ts'), 'utf8');
    const restSession = /\n {8}Session: \{\n([\s\S]*?)\n {8}\};/.exec(openapiTypes)?.[1] ?? '';
    expect(fields.filter((f) => !new RegExp(`\\n\\s*(?:/\\*\\*[^\\n]*\\n\\s*)?${f}\\??:`).test(`\n${restSession}`))).toEqual([]);
  });
});
