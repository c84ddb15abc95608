-- Share links: a read-only snapshot of one session at an unguessable link.
-- `nonce` is the link token's random part; a token is the nonce plus a MAC only the server can
-- compute, so these rows alone never make a working link.
CREATE TABLE `shares` (
    `id` VARCHAR(36) NOT NULL,
    `nonce` CHAR(22) NOT NULL,
    `projectId` VARCHAR(128) NOT NULL,
    `sessionId` CHAR(36) NOT NULL,
    `createdBy` VARCHAR(36) NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `snapshotAt` DATETIME(3) NOT NULL,
    `expiresAt` DATETIME(3) NULL,
    `audience` VARCHAR(16) NOT NULL,
    `hiddenJson` TEXT NOT NULL,
    `title` VARCHAR(255) NOT NULL,
    `sessionCreatedAt` DATETIME(3) NOT NULL,
    `agentName` VARCHAR(255) NULL,
    `llmModelsJson` TEXT NOT NULL,
    `exchangeCount` INTEGER NOT NULL,
    `views` INTEGER NOT NULL DEFAULT 0,

    UNIQUE INDEX `shares_nonce_key`(`nonce`),
    INDEX `shares_createdBy_createdAt_idx`(`createdBy`, `createdAt`),
    INDEX `shares_projectId_sessionId_idx`(`projectId`, `sessionId`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- The snapshot's exchanges; a hidden one has no markdown (never copied).
CREATE TABLE `share_exchanges` (
    `shareId` VARCHAR(36) NOT NULL,
    `number` INTEGER NOT NULL,
    `title` VARCHAR(255) NULL,
    `size` INTEGER NOT NULL,
    `markdown` MEDIUMTEXT NULL,

    PRIMARY KEY (`shareId`, `number`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- AddForeignKey
ALTER TABLE `shares` ADD CONSTRAINT `shares_projectId_sessionId_fkey` FOREIGN KEY (`projectId`, `sessionId`) REFERENCES `sessions`(`projectId`, `id`) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE `shares` ADD CONSTRAINT `shares_createdBy_fkey` FOREIGN KEY (`createdBy`) REFERENCES `users`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE `share_exchanges` ADD CONSTRAINT `share_exchanges_shareId_fkey` FOREIGN KEY (`shareId`) REFERENCES `shares`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
