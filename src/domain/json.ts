import { invalid, MESSAGES } from '../errors';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * A JSON body's bytes as a value: strict UTF-8 (a leading BOM is dropped), then JSON. Anything
 * else is the 400 `Invalid JSON`. Pure: the event loop and the worker threads use it.
 */
export function parseJsonBytes(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(utf8.decode(bytes));
  } catch {
    throw invalid(MESSAGES.invalidJson);
  }
}
