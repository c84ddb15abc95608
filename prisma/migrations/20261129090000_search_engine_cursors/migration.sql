-- Every search engine keeps its own place in the outbox. Primaries mark the rows they applied
-- (`doneAt`) instead of deleting them while some standby still has to apply them; each standby's
-- place is a cursor (the last outbox id it applied), kept here by the engine's identity. A row goes
-- once the primaries have applied it and every cursor has passed it, or when it is older than the
-- retention bound (a standby whose cursor is older than that is rebuilt from the database).

ALTER TABLE `search_outbox`
    ADD COLUMN `doneAt` DATETIME(3) NULL,
    DROP INDEX `search_outbox_availableAt_id_idx`,
    ADD INDEX `search_outbox_doneAt_availableAt_id_idx`(`doneAt`, `availableAt`, `id`),
    ADD INDEX `search_outbox_doneAt_id_idx`(`doneAt`, `id`);

CREATE TABLE `search_engine_cursors` (
    `engine` CHAR(64) NOT NULL,
    `position` INTEGER NOT NULL,
    `lastId` BIGINT NULL,
    `updatedAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    PRIMARY KEY (`engine`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
