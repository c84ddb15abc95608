import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { databaseRefusal } from '../data/errors';
import { AppError, GRAPHQL_CODE, graphqlError, MESSAGES, type GraphqlCode } from '../errors';
import type { Logger } from '../logger';

/** Apollo's own codes for problems found before execution: all are VALIDATION_ERROR here. */
const APOLLO_VALIDATION_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'PERSISTED_QUERY_NOT_FOUND',
]);

/** Codes this module itself puts on errors (the operation limits, operation-limits.ts). */
const OWN_CODES = new Set<string>(Object.values(GRAPHQL_CODE));

/**
 * The one place GraphQL errors get their public shape: domain errors keep their message and
 * details (e.g. `projectId`) under their code; Apollo's pre-execution codes become
 * VALIDATION_ERROR; anything else is logged and masked as INTERNAL_SERVER_ERROR.
 */
export function formatErrorWith(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    const place = { locations: formatted.locations, path: formatted.path };
    const entry = (code: GraphqlCode, message = formatted.message, details?: Record<string, unknown>) => graphqlError(code, message, details, place);
    if (original instanceof AppError) {
      if (original.code === 'INTERNAL_SERVER_ERROR') logger.error({ err: { message: original.message } }, 'graphql resolver failed');
      const message = original.code === 'INTERNAL_SERVER_ERROR' ? MESSAGES.internal : original.message;
      return entry(GRAPHQL_CODE[original.code], message, original.details);
    }
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && APOLLO_VALIDATION_CODES.has(code)) {
      return entry('VALIDATION_ERROR');
    }
    if (!(original instanceof GraphQLError) || original.originalError) {
      // Not a GraphQL-level error: a thrown exception from a resolver or the database.
      const refusal = databaseRefusal(original);
      if (refusal) {
        logger.error({ err: errInfo(original) }, `graphql: database ${refusal}`);
        return entry('SERVICE_UNAVAILABLE', MESSAGES[refusal]);
      }
      logger.error({ err: errInfo(original) }, 'graphql resolver failed');
      return entry('INTERNAL_SERVER_ERROR', MESSAGES.internal);
    }
    if (typeof code === 'string' && OWN_CODES.has(code) && code !== 'INTERNAL_SERVER_ERROR') {
      return entry(code);
    }
    // GraphQLErrors from execution itself (e.g. a non-null field that resolved to null).
    logger.error({ err: errInfo(original) }, 'graphql error');
    return entry('INTERNAL_SERVER_ERROR', MESSAGES.internal);
  };
}

function errInfo(e: unknown) {
  return e instanceof Error ? { message: e.message, stack: e.stack, code: (e as { code?: unknown }).code } : { message: String(e) };
}
