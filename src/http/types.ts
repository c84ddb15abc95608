import type { NamedRoute } from '../api/route';
import type { NamedSiteRoute } from './site-routes';
import type { AuthUser } from '../services/context';
import type { WorkGuard } from '../services/work-guard';
import type { BodyGate } from '../domain/body-gate';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      id: string;
      user?: AuthUser;
      /** When the request started, for the access log. */
      startedAt: bigint;
      /** sha256 (hex) of the decompressed body bytes, set when an Idempotency-Key came with it. */
      bodyDigest?: string;
      /** Set by the database watchdog for every request it watches. */
      guard?: WorkGuard;
      /** Set by admission control for a request whose body it admitted: counts the bytes as they arrive. */
      bodyGate?: BodyGate;
      /** The declared operation the request was dispatched to (http/fast/route-dispatch.ts). */
      apiRoute?: NamedRoute;
      /**
       * Past the middleware every authenticated operation shares (authentication, rate limit,
       * body, Idempotency-Key): from here on the access log and metrics name the operation.
       */
      atOperation?: boolean;
      /** The declared route outside the API's operations at this path (null: none), once looked up (http/site-routes.ts). */
      siteRoute?: NamedSiteRoute | null;
    }
  }
}

export {};
