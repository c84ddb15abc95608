/** Retention and legal hold: the fields projects and teams carry. */
import { z } from './common';

export const RetentionDays = z.int().min(1).nullable().meta({
  description:
    "Days after its last update (`updatedAt`) a session is deleted by the hourly retention sweep. null: not set here (a project falls back to its team's, then to the instance's RETENTION_DAYS; unset everywhere: kept).",
});

export const LegalHold = z.boolean().meta({
  description:
    'While true, no session is deleted by anyone (409 `Project is on legal hold`); on a team, this holds every project of the team. Set by instance administrators.',
});
