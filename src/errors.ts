/** The one domain error type. Services throw it; each front door maps `code` its own way. */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'VALIDATION_ERROR'
  | 'CONFLICT'
  | 'NOT_ACCEPTABLE'
  | 'UNPROCESSABLE'
  | 'PRECONDITION_FAILED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'RATE_LIMITED'
  | 'SERVICE_UNAVAILABLE'
  | 'REQUEST_TIMEOUT'
  | 'INTERNAL_SERVER_ERROR';

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra, client-safe details (GraphQL puts them in `extensions`). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const MESSAGES = {
  unauthenticated: 'Invalid session token',
  forbidden: 'Insufficient permissions',
  projectNotFound: 'Project not found',
  sessionNotFound: 'Session not found',
  notFound: 'Not found',
  sessionDataNotFound: 'Session data not found',
  notAcceptable: 'Not acceptable',
  idempotencyMismatch: 'Idempotency key reused with a different request',
  invalidJson: 'Invalid JSON in request body',
  preconditionFailed: 'Precondition failed',
  tooLarge: 'Request body too large',
  unsupportedEncoding: 'Unsupported content encoding',
  internal: 'Internal server error',
  unavailable: 'Service temporarily unavailable',
  busy: 'Server busy, retry later',
  requestTimeout: 'Request timeout',
} as const;

export const HTTP_STATUS: Record<ErrorCode, number> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  VALIDATION_ERROR: 400,
  CONFLICT: 409,
  NOT_ACCEPTABLE: 406,
  UNPROCESSABLE: 422,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  SERVICE_UNAVAILABLE: 503,
  REQUEST_TIMEOUT: 408,
  INTERNAL_SERVER_ERROR: 500,
};

export const unauthenticated = () => new AppError('UNAUTHENTICATED', MESSAGES.unauthenticated);
/** Another user's project (or a session in it): 403 naming the project. */
export const projectForbidden = (projectId: string) => new AppError('FORBIDDEN', MESSAGES.forbidden, { projectId });
export const invalid = (message: string, details?: Record<string, unknown>) => new AppError('VALIDATION_ERROR', message, details);
export const projectNotFound = (projectId: string) => new AppError('NOT_FOUND', MESSAGES.projectNotFound, { projectId });
export const sessionNotFound = (sessionId: string, projectId?: string) =>
  new AppError('NOT_FOUND', MESSAGES.sessionNotFound, projectId ? { sessionId, projectId } : { sessionId });

/** GraphQL `extensions.code` for each domain error (docs/graphql.md): body-level problems are validation errors. */
export const GRAPHQL_CODE: Record<ErrorCode, string> = {
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  VALIDATION_ERROR: 'VALIDATION_ERROR',
  CONFLICT: 'CONFLICT',
  NOT_ACCEPTABLE: 'VALIDATION_ERROR',
  UNPROCESSABLE: 'VALIDATION_ERROR',
  PRECONDITION_FAILED: 'VALIDATION_ERROR',
  PAYLOAD_TOO_LARGE: 'VALIDATION_ERROR',
  UNSUPPORTED_MEDIA_TYPE: 'VALIDATION_ERROR',
  RATE_LIMITED: 'RATE_LIMITED',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  REQUEST_TIMEOUT: 'VALIDATION_ERROR',
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
};

export type GraphqlCode = (typeof GRAPHQL_CODE)[ErrorCode];

/** Where in the operation an error arose (graphql-js fills these while resolving). */
interface GraphqlErrorPlace {
  locations?: ReadonlyArray<{ line: number; column: number }>;
  path?: ReadonlyArray<string | number>;
}

/**
 * One entry of GraphQL's `errors`, the one place its shape is written: the message,
 * where it arose (when it arose while resolving), and `extensions` with the code and the ids the
 * error names (`projectId`, `sessionId`, …). Used for errors raised before Apollo (401, 429, body
 * problems: src/http/errors.ts), by the operation limits (src/graphql/operation-limits.ts) and for everything Apollo formats
 * (src/graphql/errors.ts).
 */
export function graphqlError(code: GraphqlCode, message: string, details: Record<string, unknown> = {}, place: GraphqlErrorPlace = {}) {
  return { message, locations: place.locations, path: place.path, extensions: { ...details, code } };
}
