-- Contract §16. A key created with another key remembers it: it never outlives it and is revoked
-- with it.
-- AlterTable
ALTER TABLE `api_keys` ADD COLUMN `parentKeyId` VARCHAR(36) NULL;

-- CreateIndex
CREATE INDEX `api_keys_parentKeyId_idx` ON `api_keys`(`parentKeyId`);

-- Search outbox rows that failed 10 times, set aside so they never hold back later work
-- (`search outbox retry` puts them back).
-- CreateTable
CREATE TABLE `search_outbox_dead` (
    `id` BIGINT NOT NULL,
    `op` VARCHAR(16) NOT NULL,
    `userId` VARCHAR(36) NOT NULL,
    `projectId` VARCHAR(128) NOT NULL,
    `sessionId` CHAR(36) NULL,
    `attempts` INTEGER NOT NULL,
    `createdAt` DATETIME(3) NOT NULL,
    `deadAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `lastError` TEXT NULL,

    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
