/** Retention and legal hold: the fields projects and teams carry, and what a retention preview lists. */
import { Timestamp, z } from './common';

export const RetentionDays = z.int().min(1).nullable().meta({
  description:
    "Days after its last update (`updatedAt`) a session is deleted by the hourly retention sweep. null: not set here (a project falls back to its team's, then to the instance's RETENTION_DAYS; unset everywhere: kept).",
});

export const LegalHold = z.boolean().meta({
  description:
    'While true, no session is deleted by anyone (409 `Project is on legal hold`); on a team, this holds every project of the team. Set by instance administrators.',
});

export const RetentionPreview = z
  .strictObject({
    projectId: z.string(),
    retentionDays: z
      .int()
      .min(1)
      .nullable()
      .meta({ description: "The retention that applies: the project's, else its team's, else RETENTION_DAYS; null: kept." }),
    legalHold: z.boolean().meta({ description: 'The project or its team is on legal hold: the sweep deletes nothing of it.' }),
    cutoff: Timestamp.nullable().meta({ description: 'Sessions last updated before this instant are due; null when nothing is (kept, or on hold).' }),
    sessions: z.array(z.strictObject({ id: z.string(), name: z.string(), updatedAt: Timestamp })).meta({
      description: 'Every session the sweep would delete if it ran now, oldest update first.',
    }),
  })
  .meta({ id: 'RetentionPreview' });
