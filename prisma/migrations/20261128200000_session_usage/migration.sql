-- What a session cost: token usage per session and model, read from the raw agent log at upload
-- (src/domain/usage), and the session's cost in USD beside its row so that lists sort and filter
-- by it. Sessions stored before this have no usage until `usage recompute` reads their logs.

ALTER TABLE `sessions` ADD COLUMN `costUsd` DOUBLE NULL;

CREATE INDEX `sessions_userId_costUsd_idx` ON `sessions`(`userId`, `costUsd`);

CREATE TABLE `session_usage` (
    `projectId` VARCHAR(128) NOT NULL,
    `sessionId` CHAR(36) NOT NULL,
    `model` VARCHAR(255) NOT NULL,
    `inputTokens` BIGINT NOT NULL,
    `outputTokens` BIGINT NOT NULL,
    `cacheReadTokens` BIGINT NOT NULL,
    `cacheWriteTokens` BIGINT NOT NULL,
    `costUsd` DOUBLE NULL,

    PRIMARY KEY (`projectId`, `sessionId`, `model`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

ALTER TABLE `session_usage` ADD CONSTRAINT `session_usage_projectId_sessionId_fkey` FOREIGN KEY (`projectId`, `sessionId`) REFERENCES `sessions`(`projectId`, `id`) ON DELETE CASCADE ON UPDATE CASCADE;
