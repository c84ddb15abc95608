-- Webhooks: an HTTPS (or HTTP) endpoint a user registers for events of one project, of one team
-- (its admins only) or of their own projects. `secret` signs every delivery (Standard Webhooks);
-- it is shown once, at creation. `events` is the comma-separated list of event types.
CREATE TABLE `webhooks` (
    `id` VARCHAR(36) NOT NULL,
    `userId` VARCHAR(36) NOT NULL,
    `url` VARCHAR(2048) NOT NULL,
    `events` VARCHAR(512) NOT NULL,
    `projectId` VARCHAR(128) NULL,
    `teamId` VARCHAR(36) NULL,
    `secret` VARCHAR(128) NOT NULL,
    `disabledAt` DATETIME(3) NULL,
    `disabledReason` VARCHAR(255) NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    INDEX `webhooks_userId_createdAt_idx`(`userId`, `createdAt`),
    INDEX `webhooks_projectId_idx`(`projectId`),
    INDEX `webhooks_teamId_idx`(`teamId`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- One event for one webhook, written in the same transaction as the change it describes (the
-- outbox the delivery worker reads). `payload` is the exact body sent; `scopeId` the owner (user
-- or team) of what the event is about, checked again before each attempt. A claimed attempt
-- moves `nextAttemptAt` past its lease, so an attempt cut short by a crash is tried again.
CREATE TABLE `webhook_deliveries` (
    `id` BIGINT NOT NULL AUTO_INCREMENT,
    `webhookId` VARCHAR(36) NOT NULL,
    `eventId` VARCHAR(40) NOT NULL,
    `type` VARCHAR(32) NOT NULL,
    `scopeId` VARCHAR(36) NOT NULL,
    `payload` MEDIUMTEXT NOT NULL,
    `status` VARCHAR(16) NOT NULL DEFAULT 'pending',
    `attempts` INTEGER NOT NULL DEFAULT 0,
    `nextAttemptAt` DATETIME(3) NULL,
    `responseStatus` INTEGER NULL,
    `durationMs` INTEGER NULL,
    `lastError` VARCHAR(500) NULL,
    `attemptedAt` DATETIME(3) NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    INDEX `webhook_deliveries_status_nextAttemptAt_idx`(`status`, `nextAttemptAt`),
    INDEX `webhook_deliveries_webhookId_id_idx`(`webhookId`, `id`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- AddForeignKey
ALTER TABLE `webhooks` ADD CONSTRAINT `webhooks_userId_fkey` FOREIGN KEY (`userId`) REFERENCES `users`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE `webhooks` ADD CONSTRAINT `webhooks_projectId_fkey` FOREIGN KEY (`projectId`) REFERENCES `projects`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE `webhooks` ADD CONSTRAINT `webhooks_teamId_fkey` FOREIGN KEY (`teamId`) REFERENCES `teams`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE `webhook_deliveries` ADD CONSTRAINT `webhook_deliveries_webhookId_fkey` FOREIGN KEY (`webhookId`) REFERENCES `webhooks`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
