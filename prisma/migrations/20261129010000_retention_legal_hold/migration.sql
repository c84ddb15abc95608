-- Retention and legal hold, on a project and on a team. retentionDays: sessions not updated for
-- that many days are deleted by the hourly retention sweep (NULL: keep them; a project's own
-- setting wins over its team's, the team's over RETENTION_DAYS). legalHold: no session of the
-- project (or of any project of the team) is deleted by anyone while it is set.

ALTER TABLE `projects` ADD COLUMN `retentionDays` INTEGER NULL,
    ADD COLUMN `legalHold` BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE `teams` ADD COLUMN `retentionDays` INTEGER NULL,
    ADD COLUMN `legalHold` BOOLEAN NOT NULL DEFAULT false;
