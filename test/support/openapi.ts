import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type http from 'node:http';
import { openApiDocument } from '../../src/api/openapi';

/**
 * The test suite's check that code and document cannot drift: every response a
 * test receives from the REST API (`/api/v1/*`, except GraphQL and the docs themselves) must be
 * described by GET /api/v1/openapi.json — its operation, its status, its media type, its body
 * (JSON Schema 2020-12, as OpenAPI 3.1 uses) and its documented headers. `rawRequest` in
 * ./app.ts calls `checkResponse` on every response; a mismatch fails the request with a message
 * naming the operation, the status and what differs.
 */

interface Doc {
  paths: Record<string, Record<string, OperationObject>>;
  components: { headers: Record<string, HeaderObject> };
}
interface HeaderObject {
  $ref?: string;
  required?: boolean;
  schema?: { type?: string; pattern?: string; minimum?: number };
}
interface ResponseObject {
  headers?: Record<string, HeaderObject>;
  content?: Record<string, unknown>;
}
interface OperationObject {
  responses: Record<string, ResponseObject>;
}

const doc = openApiDocument() as unknown as Doc;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addFormat('binary', true);
ajv.addSchema({ ...doc, $id: 'openapi.json' });

/** Paths without parameters first, so `/sessions/sizes` wins over `/sessions/{sessionId}`. */
const templates = Object.keys(doc.paths)
  .map((t) => ({ template: t, params: (t.match(/\{/g) ?? []).length, re: new RegExp(`^/api/v1${t.replace(/\{[^}]+\}/g, '[^/]+')}/?$`, 'i') }))
  // Case-insensitive like the router (Express matches paths without case).
  .sort((a, b) => a.params - b.params);

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const compiled = new Map<string, ValidateFunction>();
function validatorAt(ref: string): ValidateFunction {
  let v = compiled.get(ref);
  if (!v) {
    v = ajv.getSchema(`openapi.json#/${ref}`);
    if (!v) throw new Error(`OpenAPI: no schema at ${ref}`);
    compiled.set(ref, v);
  }
  return v;
}
const errorEnvelope = () => validatorAt(pointer('components', 'schemas', 'Error'));

/** Paths this check leaves alone: GraphQL (described by schema.graphql) and the docs. */
const EXEMPT = /^\/api\/v1\/(graphql|docs|openapi\.json)(\/|$|\?)/;

export interface CheckedResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: unknown;
}

/** Returns null when the response matches the document, else what is wrong. */
export function responseProblem(method: string, urlPath: string, res: CheckedResponse): string | null {
  const pathname = new URL(urlPath, 'http://x').pathname;
  if (!pathname.startsWith('/api/v1/') || EXEMPT.test(pathname)) return null;
  const m = method.toLowerCase();
  // CORS preflights are answered by middleware for every path; they are not API operations.
  if (m === 'options') return null;
  const match = templates.find((t) => t.re.test(pathname) && (doc.paths[t.template][m] || (m === 'head' && doc.paths[t.template].get)));
  if (!match) {
    // Unknown route: only the documented error answers (404 with a token, 401 without, 429, 400 for
    // a body it could not parse, …) are allowed; anything else is an undocumented operation.
    if (res.status >= 400 && (m === 'head' || errorEnvelope()(res.body))) return null;
    return `undocumented operation: ${method.toUpperCase()} ${pathname} answered ${res.status}. Declare it in src/api/routes/ (docs/rest.md, "Describing a REST endpoint").`;
  }
  const opKey = doc.paths[match.template][m] ? m : 'get';
  const op = doc.paths[match.template][opKey];
  const where = `${method.toUpperCase()} ${match.template} → ${res.status}`;
  const response = op.responses[String(res.status)];
  if (!response) return `${where}: status ${res.status} is not documented (documented: ${Object.keys(op.responses).join(', ')})`;

  for (const [name, h] of Object.entries(response.headers ?? {})) {
    const header = h.$ref ? doc.components.headers[h.$ref.split('/').pop()!] : h;
    const value = res.headers[name.toLowerCase()];
    if (value === undefined) {
      if (h.required) return `${where}: required header ${name} is missing`;
      continue;
    }
    const v = String(value);
    const s = header.schema ?? {};
    if (s.type === 'integer' && !/^\d+$/.test(v)) return `${where}: header ${name} should be an integer, got ${JSON.stringify(v)}`;
    if (s.pattern && !new RegExp(s.pattern).test(v)) return `${where}: header ${name} ${JSON.stringify(v)} does not match ${s.pattern}`;
  }

  const hasBody = m !== 'head' && res.status !== 304 && res.text.length > 0;
  if (!hasBody) return null;
  if (!response.content) return `${where}: a body was sent but none is documented`;
  const mediaType = String(res.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (!(mediaType in response.content)) {
    return `${where}: Content-Type ${mediaType || '(none)'} is not documented (documented: ${Object.keys(response.content).join(', ')})`;
  }
  if (!/[/+]json$/.test(mediaType)) return null; // markdown, raw bytes, JSON lines: strings
  const validate = validatorAt(pointer('paths', match.template, opKey, 'responses', String(res.status), 'content', mediaType, 'schema'));
  const body = res.body !== undefined ? res.body : safeParse(res.text);
  if (validate(body)) return null;
  const errors = (validate.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params && 'additionalProperty' in e.params ? `: ${String(e.params.additionalProperty)}` : ''}`)
    .join('; ');
  return `${where}: the body does not match the document: ${errors}\n  body: ${res.text.slice(0, 500)}`;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Throws when the response does not match the document (the hook `rawRequest` calls). */
export function checkResponse(method: string, urlPath: string, res: CheckedResponse): void {
  const problem = responseProblem(method, urlPath, res);
  if (problem) throw new Error(`OpenAPI document mismatch: ${problem}`);
}
