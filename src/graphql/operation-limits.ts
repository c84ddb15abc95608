import { HeaderMap } from '@apollo/server';
import {
  getNamedType,
  GraphQLError,
  isEnumType,
  isInputObjectType,
  isUnionType,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  isObjectType,
  isInterfaceType,
  Kind,
  OperationTypeNode,
  visit,
  valueFromAST,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { GRAPHQL_PAGE } from '../domain/pages';
import { READ_ONLY_MESSAGE } from '../domain/scopes';

/**
 * Guards run after validation and before execution (docs/graphql.md, "Errors and limits").
 * Depth: the root field is 1; fragments count where they are spread; introspection fields
 * (`__schema`, `__type` and below) are exempt from depth (the standard introspection query nests
 * `ofType` deeper than any data query may go) but not from cost. Cost: 1 per field
 * (markdownContent and SessionExchange.markdown 100, Session.related 250: an engine search each); a field with a `limit`/`first` argument
 * multiplies its children's cost by that value (or its default); an introspection list
 * (`types`, `fields`, `args`, …) multiplies by the schema's own average size of that list, so an
 * introspection query costs about what its answer holds. Budget 50,000. Aliases: at most 100 in
 * the document. Every `limit`/`first` must be 1–200. `__typename` is free.
 */
const MAX_DEPTH = 12;
const MAX_COST = 50_000;
const MAX_ALIASES = 100;
export const MAX_QUERY_BYTES = 100 * 1024;
/** `markdown`: SessionExchange.markdown (a page of a session's markdown); `related`: Session.related. */
const FIELD_COST: Record<string, number> = { markdownContent: 100, markdown: 100, related: 250 };
const SIZE_ARGS = ['limit', 'first'];
/**
 * An introspection field's cost, like any field's. The standard introspection query costs ~22,000
 * for this schema (two fit the budget, three do not), leaving room for the schema to double
 * before GraphiQL's and code generators' query would be refused.
 */
const INTROSPECTION_FIELD_COST = 1;

/** A pre-execution rejection: VALIDATION_ERROR with HTTP 400. */
function rejection(message: string): GraphQLError {
  // Its public shape is written by formatErrorWith (src/graphql/errors.ts) through graphqlError.
  return new GraphQLError(message, { extensions: { code: 'VALIDATION_ERROR', http: { status: 400, headers: new HeaderMap() } } });
}

/** A mutation sent with a read-only key: FORBIDDEN with HTTP 403. */
/** A subscription sent to /api/v1/graphql: 400, saying where they run. */
export function subscriptionElsewhere(): GraphQLError {
  return new GraphQLError('Subscriptions run on /api/v1/graphql/stream (Server-Sent Events, the graphql-sse protocol)', {
    extensions: { code: 'VALIDATION_ERROR', http: { status: 400, headers: new HeaderMap() } },
  });
}

export function readOnlyRejection(): GraphQLError {
  return new GraphQLError(READ_ONLY_MESSAGE, { extensions: { code: 'FORBIDDEN', http: { status: 403, headers: new HeaderMap() } } });
}

/**
 * How many items an introspection list field returns, on average, for this schema: `types` and
 * `directives` their count; a type's `fields`, `inputFields`, `enumValues`, `interfaces` and
 * `possibleTypes` the total over all types divided by the number of types (so `types { fields }`
 * costs the schema's total of fields); `args` per field or directive. At least 1.
 */
type IntrospectionSizes = Record<string, number>;
const introspectionSizesOf = new WeakMap<GraphQLSchema, IntrospectionSizes>();

function introspectionSizes(schema: GraphQLSchema): IntrospectionSizes {
  let sizes = introspectionSizesOf.get(schema);
  if (sizes) return sizes;
  const types = Object.values(schema.getTypeMap());
  const directives = schema.getDirectives();
  let fields = 0;
  let args = 0;
  let inputFields = 0;
  let enumValues = 0;
  let interfaces = 0;
  let possibleTypes = 0;
  for (const t of types) {
    if (isObjectType(t) || isInterfaceType(t)) {
      const fs = Object.values(t.getFields());
      fields += fs.length;
      for (const f of fs) args += f.args.length;
      interfaces += t.getInterfaces().length;
    }
    if (isInterfaceType(t) || isUnionType(t)) possibleTypes += schema.getPossibleTypes(t).length;
    if (isInputObjectType(t)) inputFields += Object.keys(t.getFields()).length;
    if (isEnumType(t)) enumValues += t.getValues().length;
  }
  for (const d of directives) args += d.args.length;
  const per = (total: number, parents: number) => Math.max(1, Math.ceil(total / Math.max(1, parents)));
  sizes = {
    types: Math.max(1, types.length),
    directives: Math.max(1, directives.length),
    fields: per(fields, types.length),
    inputFields: per(inputFields, types.length),
    enumValues: per(enumValues, types.length),
    interfaces: per(interfaces, types.length),
    possibleTypes: per(possibleTypes, types.length),
    args: per(args, fields + directives.length),
  };
  introspectionSizesOf.set(schema, sizes);
  return sizes;
}

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
  operation: OperationDefinitionNode;
}

function sizeArgument(w: Walk, field: GraphQLField<unknown, unknown>, node: import('graphql').FieldNode): number | undefined {
  for (const argDef of field.args) {
    if (!SIZE_ARGS.includes(argDef.name)) continue;
    const argNode = node.arguments?.find((a) => a.name.value === argDef.name);
    let value: unknown;
    if (!argNode) {
      value = argDef.defaultValue;
    } else if (argNode.value.kind === Kind.VARIABLE) {
      const name = argNode.value.name.value;
      if (Object.prototype.hasOwnProperty.call(w.variables, name)) value = w.variables[name];
      else {
        const def = w.operation.variableDefinitions?.find((v) => v.variable.name.value === name);
        value = def?.defaultValue ? valueFromAST(def.defaultValue, argDef.type) : argDef.defaultValue;
      }
    } else {
      value = valueFromAST(argNode.value, argDef.type, w.variables);
    }
    if (value === undefined || value === null) {
      value = argDef.defaultValue;
      if (value === undefined || value === null) continue;
    }
    // A value of the wrong type fails variable coercion later (also a 400).
    if (typeof value !== 'number' || !Number.isInteger(value)) continue;
    if (value < GRAPHQL_PAGE.min || value > GRAPHQL_PAGE.max) {
      throw rejection(`Invalid value for ${argDef.name} of ${field.name}: must be between ${GRAPHQL_PAGE.min} and ${GRAPHQL_PAGE.max}`);
    }
    return value;
  }
  return undefined;
}

/**
 * Cost and depth of a selection set, checking size arguments on the way. `depth` is null inside
 * introspection (no depth limit there; cost still counts).
 */
function measure(w: Walk, set: SelectionSetNode, parent: GraphQLNamedType, depth: number | null, seen: Set<string>): number {
  let cost = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      const name = sel.name.value;
      if (name === '__typename') continue; // free: no resolver, no work
      if (!isObjectType(parent) && !isInterfaceType(parent)) continue;
      const meta = name === '__schema' ? SchemaMetaFieldDef : name === '__type' ? TypeMetaFieldDef : undefined;
      const field = meta ?? parent.getFields()[name];
      if (!field) continue;
      const introspection = depth === null || meta !== undefined;
      const d = introspection ? null : depth + 1;
      if (d !== null && d > MAX_DEPTH) throw rejection(`Query is too deep: maximum depth is ${MAX_DEPTH}`);
      const size = introspection ? introspectionSizes(w.schema)[name] : sizeArgument(w, field, sel);
      let child = 0;
      if (sel.selectionSet) child = measure(w, sel.selectionSet, getNamedType(field.type), d, seen);
      cost += (introspection ? INTROSPECTION_FIELD_COST : (FIELD_COST[name] ?? 1)) + (size ?? 1) * child;
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      const type = sel.typeCondition ? (w.schema.getType(sel.typeCondition.name.value) ?? parent) : parent;
      cost += measure(w, sel.selectionSet, type, depth, seen);
    } else {
      const frag = w.fragments.get(sel.name.value);
      if (!frag || seen.has(frag.name.value)) continue;
      const type = w.schema.getType(frag.typeCondition.name.value) ?? parent;
      const inner = new Set(seen).add(frag.name.value);
      cost += measure(w, frag.selectionSet, type, depth, inner);
    }
    if (cost > MAX_COST) throw rejection(`Query is too expensive: cost exceeds the budget of ${MAX_COST}`);
  }
  return cost;
}

export function checkOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | undefined,
): number {
  let aliases = 0;
  visit(document, {
    Field(node) {
      if (node.alias) aliases++;
    },
  });
  if (aliases > MAX_ALIASES) throw rejection(`Too many aliases: at most ${MAX_ALIASES} are allowed`);
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  const root =
    operation.operation === OperationTypeNode.MUTATION
      ? schema.getMutationType()
      : operation.operation === OperationTypeNode.SUBSCRIPTION
        ? schema.getSubscriptionType()
        : schema.getQueryType();
  // graphql-js only notices a missing root type at execution; it is the client's mistake.
  if (!root) throw rejection(`This service has no ${operation.operation} operations`);
  return measure({ schema, fragments, variables: variables ?? {}, operation }, operation.selectionSet, root, 0, new Set());
}
