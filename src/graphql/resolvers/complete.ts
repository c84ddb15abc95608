/**
 * Completeness of the resolver map, checked by the compiler from codegen's resolver types
 * (src/generated/graphql.ts). Codegen marks every resolver optional, since graphql-js falls back
 * to reading the parent object's property. `CompleteResolvers` makes a resolver **required**
 * exactly where that fallback cannot work:
 * - every field of Query and Mutation (their parent is nothing);
 * - every field of an object type whose model (the mapper in codegen.ts, else the GraphQL type)
 *   lacks it, or holds it with a type the field does not accept (a Date where the field is a
 *   String, a bigint where it is an Int, a JSON string where it is a list, …).
 * A type with such a field must be in the map; a type without one may be left out. So a new
 * schema field that no model provides, or a mapper change that drops one, fails
 * `npm run typecheck` with `Property '<field>' is missing in type …`.
 */
import type { Resolvers, ResolversParentTypes } from '../../generated/graphql';

type Internal = '__isTypeOf' | '__resolveType' | '__resolveReference';

/** What a field resolver must produce (codegen's `Resolver<TResult, …>` → TResult, unwrapped). */
type ResultOf<F> = Awaited<ReturnType<Extract<NonNullable<F>, (...args: never[]) => unknown>>>;

type Parent<T extends keyof Resolvers> = T extends keyof ResolversParentTypes ? ResolversParentTypes[T] : never;

type FieldsOf<T extends keyof Resolvers> = Exclude<keyof NonNullable<Resolvers[T]>, Internal>;

/** What the default resolver may find: on a nullable field, an absent property reads as null. */
type Accepted<R> = null extends R ? R | undefined : R;

/** Whether the parent's property `V` can stand for the field (`never`: Query's and Mutation's empty parent). */
type Serves<V, R> = [V] extends [never] ? false : [V] extends [Accepted<R>] ? true : false;

/** The fields of `T` that the default resolver (reading the parent's property) cannot serve. */
type FieldsNeedingResolvers<T extends keyof Resolvers> = {
  [K in FieldsOf<T>]-?: K extends keyof Parent<T> ? (Serves<Parent<T>[K], ResultOf<NonNullable<Resolvers[T]>[K]>> extends true ? never : K) : K;
}[FieldsOf<T>];

type Needs<T extends keyof Resolvers> = [FieldsNeedingResolvers<T>] extends [never] ? false : true;

/** The resolvers of one type, with the ones it cannot do without required (each resolver file is typed by it). */
export type ResolversOf<T extends keyof Resolvers> = NonNullable<Resolvers[T]> & {
  [K in FieldsNeedingResolvers<T>]-?: NonNullable<NonNullable<Resolvers[T]>[K]>;
};

export type CompleteResolvers = {
  [T in keyof Resolvers as Needs<T> extends true ? T : never]-?: ResolversOf<T>;
} & {
  [T in keyof Resolvers as Needs<T> extends true ? never : T]?: NonNullable<Resolvers[T]>;
};
