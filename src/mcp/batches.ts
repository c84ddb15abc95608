/**
 * JSON-RPC batches on /mcp. Protocol revision 2025-06-18 removed them: a batch sent under it or a
 * later one is refused whole. Under the older revisions that had them (and without a revision
 * header, which the SDK reads as 2025-03-26) every call in a batch is a request of its own for the
 * rate limit: the POST paid for the first; each further call spends one more, and a call over the
 * limit gets the rate-limit error as its JSON-RPC answer while the others run.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { DEFAULT_NEGOTIATED_PROTOCOL_VERSION, isInitializeRequest, isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Request } from 'express';
import { AppError, MESSAGES } from '../errors';

/** The first protocol revision without batches. */
const NO_BATCHES_FROM = '2025-06-18';

/** The JSON-RPC error code of a call refused by a limit (the one this endpoint's own errors use). */
const LIMIT_ERROR_CODE = -32000;

/** The revision a batch is sent under: the header, else an initialize request's, else the SDK's default. */
function revisionOf(req: Request, batch: unknown[]): string {
  const header = req.get('mcp-protocol-version');
  if (header) return header;
  const init = batch.find(isInitializeRequest);
  return init?.params.protocolVersion ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
}

/** Why this batch is refused (its revision removed batches), or null. Revisions are dates: they compare as strings. */
export function batchRefusal(req: Request, batch: unknown[]): string | null {
  const revision = revisionOf(req, batch);
  if (revision < NO_BATCHES_FROM) return null;
  return `Invalid Request: JSON-RPC batches are not supported in protocol version ${revision} (removed in ${NO_BATCHES_FROM}); send one message per request`;
}

/**
 * Makes every call of a batch past the first spend from the caller's rate limit before it runs
 * (`spend`: null when allowed, else the error), one after another in the batch's order. A refused
 * call is answered with the error; nothing of it runs. Installed on a connected transport.
 */
export function countBatchCalls(transport: Transport, spend: () => Promise<unknown>): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error('countBatchCalls: the transport is not connected');
  let calls = 0;
  let queue: Promise<void> = Promise.resolve();
  transport.onmessage = (message: JSONRPCMessage, extra) => {
    if (!isJSONRPCRequest(message) || ++calls === 1) return deliver(message, extra);
    queue = queue.then(async () => {
      const refused = await spend();
      if (!refused) return deliver(message, extra);
      const err = refused instanceof AppError ? refused : new AppError('INTERNAL_SERVER_ERROR', MESSAGES.internal);
      const data = err.details.retryAfter !== undefined ? { retryAfter: err.details.retryAfter } : undefined;
      await transport.send({ jsonrpc: '2.0', id: message.id, error: { code: LIMIT_ERROR_CODE, message: err.message, ...(data ? { data } : {}) } });
    });
    // A call whose answer could not be sent (the client went away) holds back none after it.
    queue = queue.catch(() => undefined);
  };
}
