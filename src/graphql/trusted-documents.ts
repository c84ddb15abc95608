import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { GraphQLSchema } from 'graphql';
import type { Config } from '../config';
import { ctxOf } from '../http/request-context';
import { SITE_ROUTES } from '../http/site-routes';
import type { Deps } from '../services/context';
import { DOCUMENT_ID, registerDocuments, registeredDocuments, type TrustedDocuments } from '../services/graphql-documents';
import { isPlainObject } from '../domain/validation';

/**
 * Trusted documents at the GraphQL door (docs/graphql.md). A request may carry `documentId`
 * (`sha256:<hex>`, POST body or GET parameter) instead of `query`: the registered text takes its
 * place before Apollo sees the request, and the id goes with it (as `extensions.documentId`) for
 * operation usage. With GRAPHQL_TRUSTED_DOCUMENTS=cookie a browser-session request must send an
 * id (a raw query → 400 PERSISTED_QUERY_NOT_IN_LIST; a key still may send text); with `all`,
 * every request must.
 */

const refuse = (res: Response, code: string, message: string) => {
  res.status(400).json({ errors: [{ message, extensions: { code } }] });
};

/** Where the request's operation is: the POST body or the GET parameters. */
const paramsOf = (req: Request): Record<string, unknown> => (req.method === 'POST' ? (isPlainObject(req.body) ? req.body : {}) : req.query);

export function trustedDocumentsGate(trusted: TrustedDocuments, mode: Config['graphqlTrustedDocuments']): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const params = paramsOf(req);
    const id = params.documentId;
    // The service puts the id there itself, for operation usage: a client may not.
    const ext = params.extensions;
    if ((isPlainObject(ext) && 'documentId' in ext) || (typeof ext === 'string' && ext.includes('documentId'))) {
      return refuse(res, 'BAD_REQUEST', 'extensions.documentId is set by the service: send documentId beside query instead');
    }
    if (id === undefined) {
      const raw = typeof params.query === 'string';
      const mustUseIds = mode === 'all' || (mode === 'cookie' && req.user?.keyId === null);
      if (raw && mustUseIds) {
        return refuse(
          res,
          'PERSISTED_QUERY_NOT_IN_LIST',
          mode === 'all'
            ? 'Only registered documents run here: send documentId'
            : 'Requests signed in with the browser session run only registered documents: send documentId, or use an API key',
        );
      }
      return next();
    }
    if (typeof id !== 'string' || !DOCUMENT_ID.test(id)) return refuse(res, 'BAD_REQUEST', 'documentId must be "sha256:" and 64 lowercase hex digits');
    if (params.query !== undefined) return refuse(res, 'BAD_REQUEST', 'Send either query or documentId, not both');
    trusted.text(id).then((text) => {
      if (text === null) return refuse(res, 'PERSISTED_QUERY_NOT_FOUND', `No registered document has the id ${id}`);
      if (req.method === 'POST') {
        const { documentId: _id, extensions, ...rest } = params;
        req.body = { ...rest, query: text, extensions: { ...(isPlainObject(extensions) ? extensions : {}), documentId: id } };
      } else {
        const url = new URL(req.url, 'http://x');
        url.searchParams.delete('documentId');
        url.searchParams.set('query', text);
        req.url = `${url.pathname}${url.search}`;
      }
      next();
    }, next);
  };
}

/** POST /api/v1/graphql/documents (register an app version's documents) and GET (list them): instance administrators. */
export function documentsRouter(
  deps: Deps,
  schema: GraphQLSchema,
  builtIn: Map<string, string>,
  mw: { auth: RequestHandler; rateLimit: RequestHandler; body: RequestHandler },
): Router {
  const router = Router();
  router.all(SITE_ROUTES.graphqlDocuments.path, mw.auth, mw.rateLimit, (req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'GET' || req.method === 'HEAD') {
      registeredDocuments(ctxOf(req, deps), req.query.app, builtIn).then((documents) => res.json({ documents }), next);
      return;
    }
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'GET, HEAD, POST');
      res
        .status(405)
        .json({ errors: [{ message: 'Method not allowed: GET lists documents, POST registers them', extensions: { code: 'METHOD_NOT_ALLOWED' } }] });
      return;
    }
    mw.body(req, res, (err?: unknown) => {
      if (err) return next(err);
      registerDocuments(ctxOf(req, deps), schema, req.body).then((r) => res.status(201).json(r), next);
    });
  });
  return router;
}
