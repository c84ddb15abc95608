import type { Ctx } from '../services/context';
import { createLoaders, type Loaders } from './loaders';

/** Per-request GraphQL context: the service context plus this request's batching loaders. */
export interface GraphqlContext {
  ctx: Ctx;
  loaders: Loaders;
}

export function createGraphqlContext(ctx: Ctx): GraphqlContext {
  return { ctx, loaders: createLoaders(ctx) };
}
