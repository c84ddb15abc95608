-- Tables default to utf8mb4_bin: ids and label values compare exactly. Columns that users
-- search or sort by name (emails, names, client and agent names) use utf8mb4_unicode_ci.

-- CreateTable
CREATE TABLE `users` (
    `id` VARCHAR(36) NOT NULL,
    `email` VARCHAR(320) COLLATE utf8mb4_unicode_ci NOT NULL,
    `name` VARCHAR(255) COLLATE utf8mb4_unicode_ci NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    UNIQUE INDEX `users_email_key`(`email`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- CreateTable
CREATE TABLE `api_keys` (
    `id` VARCHAR(36) NOT NULL,
    `userId` VARCHAR(36) NOT NULL,
    `name` VARCHAR(100) NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `lastUsedAt` DATETIME(3) NULL,
    `expiresAt` DATETIME(3) NULL,
    `revokedAt` DATETIME(3) NULL,

    INDEX `api_keys_userId_createdAt_idx`(`userId`, `createdAt`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- CreateTable
CREATE TABLE `projects` (
    `id` VARCHAR(128) NOT NULL,
    `ownerId` VARCHAR(36) NOT NULL,
    `name` VARCHAR(255) COLLATE utf8mb4_unicode_ci NOT NULL,
    `icon` VARCHAR(32) NOT NULL,
    `color` VARCHAR(32) NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `updatedAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    INDEX `projects_ownerId_updatedAt_idx`(`ownerId`, `updatedAt`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- CreateTable
CREATE TABLE `sessions` (
    `projectId` VARCHAR(128) NOT NULL,
    `id` CHAR(36) NOT NULL,
    `userId` VARCHAR(36) NOT NULL,
    `name` VARCHAR(255) COLLATE utf8mb4_unicode_ci NOT NULL,
    `userTitle` TEXT NULL,
    `markdownSize` INTEGER NOT NULL,
    `rawDataSize` INTEGER NOT NULL,
    `etag` VARCHAR(80) NOT NULL,
    `contentDigest` CHAR(64) NOT NULL,
    `createdAt` DATETIME(3) NOT NULL,
    `updatedAt` DATETIME(3) NOT NULL,
    `startedAt` DATETIME(3) NOT NULL,
    `endedAt` DATETIME(3) NOT NULL,
    `clientName` VARCHAR(255) COLLATE utf8mb4_unicode_ci NULL,
    `clientVersion` VARCHAR(255) NULL,
    `agentName` VARCHAR(255) COLLATE utf8mb4_unicode_ci NULL,
    `deviceId` VARCHAR(255) NULL,
    `metadataJson` TEXT NOT NULL,
    `hasGitBranches` BOOLEAN NOT NULL DEFAULT false,

    INDEX `sessions_userId_updatedAt_idx`(`userId`, `updatedAt`),
    INDEX `sessions_userId_createdAt_idx`(`userId`, `createdAt`),
    INDEX `sessions_userId_startedAt_idx`(`userId`, `startedAt`),
    INDEX `sessions_userId_name_idx`(`userId`, `name`),
    INDEX `sessions_userId_clientName_idx`(`userId`, `clientName`),
    INDEX `sessions_userId_agentName_idx`(`userId`, `agentName`),
    INDEX `sessions_userId_deviceId_idx`(`userId`, `deviceId`),
    INDEX `sessions_projectId_updatedAt_idx`(`projectId`, `updatedAt`),
    INDEX `sessions_projectId_createdAt_idx`(`projectId`, `createdAt`),
    INDEX `sessions_userId_id_idx`(`userId`, `id`),
    PRIMARY KEY (`projectId`, `id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- CreateTable
CREATE TABLE `session_chunks` (
    `projectId` VARCHAR(128) NOT NULL,
    `sessionId` CHAR(36) NOT NULL,
    `part` VARCHAR(8) NOT NULL,
    `seq` INTEGER NOT NULL,
    `data` LONGBLOB NOT NULL,

    PRIMARY KEY (`projectId`, `sessionId`, `part`, `seq`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- CreateTable
CREATE TABLE `session_labels` (
    `projectId` VARCHAR(128) NOT NULL,
    `sessionId` CHAR(36) NOT NULL,
    `kind` VARCHAR(16) NOT NULL,
    `value` VARCHAR(255) NOT NULL,
    `userId` VARCHAR(36) NOT NULL,

    INDEX `session_labels_userId_kind_value_idx`(`userId`, `kind`, `value`),
    PRIMARY KEY (`projectId`, `sessionId`, `kind`, `value`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- CreateTable
CREATE TABLE `search_outbox` (
    `id` BIGINT NOT NULL AUTO_INCREMENT,
    `op` VARCHAR(16) NOT NULL,
    `userId` VARCHAR(36) NOT NULL,
    `projectId` VARCHAR(128) NOT NULL,
    `sessionId` CHAR(36) NULL,
    `attempts` INTEGER NOT NULL DEFAULT 0,
    `availableAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `lastError` TEXT NULL,

    INDEX `search_outbox_availableAt_id_idx`(`availableAt`, `id`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- AddForeignKey
ALTER TABLE `api_keys` ADD CONSTRAINT `api_keys_userId_fkey` FOREIGN KEY (`userId`) REFERENCES `users`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE `projects` ADD CONSTRAINT `projects_ownerId_fkey` FOREIGN KEY (`ownerId`) REFERENCES `users`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE `sessions` ADD CONSTRAINT `sessions_projectId_fkey` FOREIGN KEY (`projectId`) REFERENCES `projects`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE `session_chunks` ADD CONSTRAINT `session_chunks_projectId_sessionId_fkey` FOREIGN KEY (`projectId`, `sessionId`) REFERENCES `sessions`(`projectId`, `id`) ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE `session_labels` ADD CONSTRAINT `session_labels_projectId_sessionId_fkey` FOREIGN KEY (`projectId`, `sessionId`) REFERENCES `sessions`(`projectId`, `id`) ON DELETE CASCADE ON UPDATE CASCADE;
