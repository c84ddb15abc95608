-- Content in object storage (CONTENT_STORE=s3): one row per stored part naming its object (each
-- version has a key of its own), and the sweep's record of objects no row names.
CREATE TABLE `session_objects` (
    `projectId` VARCHAR(128) NOT NULL,
    `sessionId` CHAR(36) NOT NULL,
    `part` VARCHAR(8) NOT NULL,
    `objectKey` VARCHAR(255) NOT NULL,
    `size` BIGINT NOT NULL,
    `sha256` CHAR(64) NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    UNIQUE INDEX `session_objects_objectKey_key`(`objectKey`),
    PRIMARY KEY (`projectId`, `sessionId`, `part`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE TABLE `unreferenced_objects` (
    `objectKey` VARCHAR(255) NOT NULL,
    `firstSeenAt` DATETIME(3) NOT NULL,
    `lastSeenAt` DATETIME(3) NOT NULL,

    PRIMARY KEY (`objectKey`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- AddForeignKey
ALTER TABLE `session_objects` ADD CONSTRAINT `session_objects_projectId_sessionId_fkey` FOREIGN KEY (`projectId`, `sessionId`) REFERENCES `sessions`(`projectId`, `id`) ON DELETE CASCADE ON UPDATE CASCADE;
