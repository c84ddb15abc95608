/**
 * Storage failures as the doors see them: the database unreachable, timed out or refusing
 * connections (the doors answer 503 and the client may retry).
 */
export { isDatabaseUnavailable } from '../data/errors';
