-- Teams: projects owned by a team, members with roles, invitations, credentials bound to a team.

CREATE TABLE `teams` (
    `id` VARCHAR(36) NOT NULL,
    `name` VARCHAR(100) NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- role: 'admin', 'member' or 'viewer'.
CREATE TABLE `team_members` (
    `teamId` VARCHAR(36) NOT NULL,
    `userId` VARCHAR(36) NOT NULL,
    `role` VARCHAR(16) NOT NULL,
    `joinedAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    INDEX `team_members_userId_idx`(`userId`),
    PRIMARY KEY (`teamId`, `userId`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- One-time invitation links (sha256 of the token), valid 7 days.
CREATE TABLE `team_invitations` (
    `id` VARCHAR(36) NOT NULL,
    `teamId` VARCHAR(36) NOT NULL,
    `tokenHash` CHAR(64) NOT NULL,
    `role` VARCHAR(16) NOT NULL,
    `email` VARCHAR(320) NULL,
    `createdBy` VARCHAR(36) NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `expiresAt` DATETIME(3) NOT NULL,
    `usedAt` DATETIME(3) NULL,
    `usedBy` VARCHAR(36) NULL,

    UNIQUE INDEX `team_invitations_tokenHash_key`(`tokenHash`),
    INDEX `team_invitations_teamId_idx`(`teamId`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- A project is owned by a user ('user', the existing ones) or a team ('team'); ownerId names it.
ALTER TABLE `projects` DROP FOREIGN KEY `projects_ownerId_fkey`;
ALTER TABLE `projects` ADD COLUMN `ownerType` VARCHAR(8) NOT NULL DEFAULT 'user';

-- Who first uploaded the session (null: stored before teams existed).
ALTER TABLE `sessions` ADD COLUMN `uploadedBy` VARCHAR(36) NULL;
CREATE INDEX `sessions_userId_uploadedBy_idx` ON `sessions`(`userId`, `uploadedBy`);

-- Where projects created through a credential go (null: the user's own).
ALTER TABLE `api_keys` ADD COLUMN `teamId` VARCHAR(36) NULL;
CREATE INDEX `api_keys_teamId_idx` ON `api_keys`(`teamId`);
ALTER TABLE `device_codes` ADD COLUMN `teamId` VARCHAR(36) NULL;
CREATE INDEX `device_codes_teamId_idx` ON `device_codes`(`teamId`);

-- AddForeignKey
ALTER TABLE `team_members` ADD CONSTRAINT `team_members_teamId_fkey` FOREIGN KEY (`teamId`) REFERENCES `teams`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE `team_members` ADD CONSTRAINT `team_members_userId_fkey` FOREIGN KEY (`userId`) REFERENCES `users`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE `team_invitations` ADD CONSTRAINT `team_invitations_teamId_fkey` FOREIGN KEY (`teamId`) REFERENCES `teams`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE `api_keys` ADD CONSTRAINT `api_keys_teamId_fkey` FOREIGN KEY (`teamId`) REFERENCES `teams`(`id`) ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE `device_codes` ADD CONSTRAINT `device_codes_teamId_fkey` FOREIGN KEY (`teamId`) REFERENCES `teams`(`id`) ON DELETE SET NULL ON UPDATE CASCADE;
