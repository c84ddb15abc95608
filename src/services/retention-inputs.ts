/** The retention and legal hold fields of a project's and a team's PATCH, with their 400 messages. */
import { z } from 'zod';

/** The longest retention a project or team may set (about 100 years). */
const MAX_RETENTION_DAYS = 36500;

/** Retention and legal hold, as a project's and a team's PATCH take them. */
export const retentionFields = {
  retentionDays: z
    .number({ error: `Invalid value for retentionDays: must be an integer between 1 and ${MAX_RETENTION_DAYS}, or null` })
    .check((ctx) => {
      if (!Number.isInteger(ctx.value) || ctx.value < 1 || ctx.value > MAX_RETENTION_DAYS)
        ctx.issues.push({
          code: 'custom',
          input: ctx.value,
          message: `Invalid value for retentionDays: must be an integer between 1 and ${MAX_RETENTION_DAYS}, or null`,
        });
    })
    .nullable()
    .optional()
    .meta({
      type: ['integer', 'null'],
      minimum: 1,
      maximum: MAX_RETENTION_DAYS,
      description:
        "Days after its last update a session is deleted by the retention sweep; null: not set here (the team's, else RETENTION_DAYS). The owner or a team admin.",
    }),
  legalHold: z
    .boolean({ error: 'Invalid type for legalHold: expected a boolean' })
    .nullish()
    .meta({ description: 'Stops every deletion of its sessions while true (null: unchanged). Instance administrators only.' }),
};
