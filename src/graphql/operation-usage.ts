import { createHash } from 'node:crypto';
import { print, TypeInfo, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { clientNameOf, type OperationUsageRecorder } from '../services/graphql-usage';
import type { GraphqlContext } from './context';

/**
 * Counts every operation that validated (src/services/graphql-usage.ts): its id (the trusted
 * document's id when it came as one, else the sha256 of its normalised text, `print` of the
 * parsed document), its name, the client that sent it and the
 * schema coordinates it touches (`Type.field`, `Type.field.argument`, `Input.field`). What an
 * operation touches is worked out once per distinct text: a cache of at most CACHE_SIZE entries,
 * emptied when full.
 */

interface OperationInfo {
  id: string;
  name: string | null;
  coordinates: string[];
}

const CACHE_SIZE = 1_000;

/** The coordinates a document touches, sorted. */
export function coordinatesOf(schema: GraphQLSchema, document: DocumentNode): string[] {
  const typeInfo = new TypeInfo(schema);
  const out = new Set<string>();
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const parent = typeInfo.getParentType();
        if (parent && !node.name.value.startsWith('__')) out.add(`${parent.name}.${node.name.value}`);
      },
      Argument(node) {
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        if (parent && field) out.add(`${parent.name}.${field.name}.${node.name.value}`);
      },
      ObjectField(node) {
        const input = typeInfo.getParentInputType();
        if (input && 'name' in input) out.add(`${input.name}.${node.name.value}`);
      },
    }),
  );
  return [...out].sort();
}

/** The trusted document's id the door put in `extensions` (src/graphql/trusted-documents.ts). */
const documentIdOf = (extensions: Record<string, unknown> | undefined): string | null =>
  typeof extensions?.documentId === 'string' && /^sha256:[0-9a-f]{64}$/.test(extensions.documentId) ? extensions.documentId : null;

export function operationUsagePlugin(recorder: OperationUsageRecorder): ApolloServerPlugin<GraphqlContext> {
  const cache = new Map<string, OperationInfo>();
  const infoOf = (schema: GraphQLSchema, document: DocumentNode, text: string, name: string | null, documentId: string | null): OperationInfo => {
    const key = `${name ?? ''}\n${text}`;
    let info = cache.get(key);
    if (!info) {
      if (cache.size >= CACHE_SIZE) cache.clear();
      const id = documentId ?? `sha256:${createHash('sha256').update(print(document)).digest('hex')}`;
      info = { id, name, coordinates: coordinatesOf(schema, document) };
      cache.set(key, info);
    }
    return info;
  };
  return {
    requestDidStart() {
      return Promise.resolve<GraphQLRequestListener<GraphqlContext>>({
        didResolveOperation(rc) {
          const text = rc.source ?? print(rc.document);
          const name = rc.operationName ?? rc.operation?.name?.value ?? null;
          recorder.record(
            infoOf(rc.schema, rc.document, text, name, documentIdOf(rc.request.extensions)),
            clientNameOf((h) => rc.request.http?.headers.get(h)),
          );
          return Promise.resolve();
        },
      });
    },
  };
}
