-- The upload CLI's session data (contract §15): its size on the session row (0 when none) and a
-- digest of it, so that an upload without session data keeps the stored one and the etag still
-- covers it without reading it back. The bytes go to session_chunks as part 'session'.

-- AlterTable
ALTER TABLE `sessions` ADD COLUMN `sessionDataSize` INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN `sessionDataDigest` CHAR(64) NULL;

-- CreateIndex
CREATE INDEX `sessions_userId_sessionDataSize_idx` ON `sessions`(`userId`, `sessionDataSize`);

-- Idempotency-Key (contract §15): the first response to a PUT or POST with a key, per user, 24 h.
-- CreateTable
CREATE TABLE `idempotency_keys` (
    `userId` VARCHAR(36) NOT NULL,
    `idemKey` VARCHAR(255) NOT NULL,
    `fingerprint` CHAR(64) NOT NULL,
    `status` INTEGER NULL,
    `responseJson` MEDIUMTEXT NULL,
    `etag` VARCHAR(80) NULL,
    `createdAt` DATETIME(3) NOT NULL,
    `completedAt` DATETIME(3) NULL,

    INDEX `idempotency_keys_createdAt_idx`(`createdAt`),
    PRIMARY KEY (`userId`, `idemKey`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- AddForeignKey
ALTER TABLE `idempotency_keys` ADD CONSTRAINT `idempotency_keys_userId_fkey` FOREIGN KEY (`userId`) REFERENCES `users`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
