import '../http/types';

export { ctxOf } from '../http/request-context';

export const ok = <T>(data: T) => ({ success: true as const, data });
