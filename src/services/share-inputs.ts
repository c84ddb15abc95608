/**
 * The bodies that make and change a share link, as zod schemas read through `parseInput` (the
 * first problem is the 400), with the messages share links have always answered. What depends on
 * the server's settings (links that never expire, public links) and on the session (an exchange
 * number beyond its last) is checked by src/services/shares.ts once the body is well-formed.
 */
import { Audience } from '../api/schemas/shares';
import { z } from 'zod';

const EXPIRY_DAYS = [1, 7, 30, 90] as const;

export const SHARE_INPUT_MESSAGES = {
  expiry: 'expiresInDays must be 1, 7, 30 or 90',
  audience: 'audience must be public or signed-in',
  hidden: 'hiddenExchanges must be a list of exchange numbers (1-based)',
  refresh: 'refresh must be true',
} as const;

const ExpiresInDays = z
  .union([...EXPIRY_DAYS.map((d) => z.literal(d)), z.null()], { error: SHARE_INPUT_MESSAGES.expiry })
  .optional()
  .meta({ description: 'Days until the link stops working: 1, 7, 30 (the default) or 90; null for never, only with `SHARES_ALLOW_NEVER=true` (else 400).' });

/** Exchange numbers, each once and in order. */
const HiddenExchanges = z
  .array(z.int({ error: SHARE_INPUT_MESSAGES.hidden }).min(1, SHARE_INPUT_MESSAGES.hidden), { error: SHARE_INPUT_MESSAGES.hidden })
  .max(100_000, SHARE_INPUT_MESSAGES.hidden)
  .transform((v) => [...new Set(v)].sort((a, b) => a - b))
  .optional()
  .meta({
    description: 'Exchange numbers (1-based, as in the reader’s table of contents) the link leaves out. Hidden exchanges are never copied into the snapshot.',
  });

/** A share body: a JSON object (or none at all) naming only `fields`. */
function shareBody<S extends z.core.$ZodLooseShape>(shape: S) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `Unknown field ${JSON.stringify(iss.keys[0]).slice(0, 80)} (allowed: ${allowed})`
        : 'Request body must be a JSON object',
  });
}

export const CreateShareInput = shareBody({
  expiresInDays: ExpiresInDays,
  hiddenExchanges: HiddenExchanges,
  audience: z
    .enum(Audience.options, { error: SHARE_INPUT_MESSAGES.audience })
    .optional()
    .meta({ description: 'Absent: `public`, or `signed-in` when the server allows only that.' }),
}).meta({ id: 'CreateShare' });

export const UpdateShareInput = shareBody({
  expiresInDays: ExpiresInDays,
  hiddenExchanges: HiddenExchanges,
  refresh: z.boolean({ error: SHARE_INPUT_MESSAGES.refresh }).optional().meta({ description: 'true: take a new snapshot of the session now.' }),
}).meta({ id: 'UpdateShare' });
