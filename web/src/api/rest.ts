/**
 * The console's REST calls, typed by the service's OpenAPI document: `npm run generate` writes
 * web/src/openapi/schema.ts from it (openapi-typescript), so a path, its parameters, its body and
 * the `data` of its answer are checked against what the service declares. The calls go through
 * `api` (same origin, cookie, CSRF token).
 */
import type { components, paths } from '../openapi/schema';
import { api, type ApiResult } from './http';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
/** The document's paths (relative to its server, /api/v1) that have `M`. */
type PathsWith<M extends Method> = { [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never }[keyof paths];
type Operation<P extends keyof paths, M extends Method> = paths[P] extends { [K in M]: infer O } ? O : never;

type Json<T> = T extends { content: { 'application/json': infer J } } ? J : never;
/** The `data` of a 200 or 201 answer (the envelope `{ success: true, data }`). */
type DataOf<O> = O extends { responses: infer R } ? (Json<R[Extract<keyof R, 200 | 201>]> extends { data: infer D } ? D : undefined) : never;
type BodyOf<O> = O extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;
type ParamsOf<O> = O extends { parameters: { path: infer P } } ? P : never;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? ([Q] extends [undefined] ? never : NonNullable<Q>) : never;

/** What a call takes besides its path: the path's parameters and the JSON body, when it has them (and nothing else). */
type Init<O> = ([ParamsOf<O>] extends [never] ? { params?: never } : { params: ParamsOf<O> }) &
  ([QueryOf<O>] extends [never] ? { query?: never } : { query?: QueryOf<O> }) &
  ([BodyOf<O>] extends [never] ? { body?: never } : O extends { requestBody: object } ? { body: BodyOf<O> } : { body?: BodyOf<O> });
type Needed<O> = [ParamsOf<O>] extends [never] ? (O extends { requestBody: object } ? true : false) : true;
type Args<O> = Needed<O> extends true ? [init: Init<O>] : [init?: Init<O>];

/** `/users/{userId}/disable` with `{ userId: 'u 1' }` → `/api/v1/users/u%201/disable`. */
function url(path: string, params: Record<string, string> | undefined, query?: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') q.set(k, String(v));
  const search = q.size ? `?${q.toString()}` : '';
  return `/api/v1${path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params?.[name] ?? ''))}${search}`;
}

function call<M extends Method, P extends PathsWith<M>>(method: M, path: P, ...[init]: Args<Operation<P, M>>): Promise<ApiResult<DataOf<Operation<P, M>>>> {
  const i = init as { params?: Record<string, string>; query?: Record<string, string | number | undefined>; body?: unknown } | undefined;
  return api<DataOf<Operation<P, M>>>(method.toUpperCase(), url(path, i?.params, i?.query), i?.body);
}

export const rest = {
  get: <P extends PathsWith<'get'>>(path: P, ...init: Args<Operation<P, 'get'>>) => call('get', path, ...init),
  post: <P extends PathsWith<'post'>>(path: P, ...init: Args<Operation<P, 'post'>>) => call('post', path, ...init),
  delete: <P extends PathsWith<'delete'>>(path: P, ...init: Args<Operation<P, 'delete'>>) => call('delete', path, ...init),
};

/** A schema of the document by name (e.g. `Schema<'BrowserSession'>`). */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];

/** The `data` of a call's answer (e.g. `Data<'post', '/invitations/lookup'>`). */
export type Data<M extends Method, P extends PathsWith<M>> = DataOf<Operation<P, M>>;

/**
 * A text field of a submitted form, as the body of a call takes it. The forms' fields are always
 * present; a missing one would be sent as null, as before, and refused by the service.
 */
export const formText = (form: FormData, name: string) => form.get(name) as string;
