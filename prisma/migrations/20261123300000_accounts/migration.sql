-- Accounts (contract §10) and device login (§11).

-- Passwords (argon2id PHC strings), roles and disabling.
ALTER TABLE `users`
    ADD COLUMN `passwordHash` VARCHAR(255) NULL,
    ADD COLUMN `role` VARCHAR(16) NOT NULL DEFAULT 'member',
    ADD COLUMN `disabledAt` DATETIME(3) NULL;

-- A key row is either an API key ('key') or a device login's refresh token ('device').
ALTER TABLE `api_keys`
    ADD COLUMN `kind` VARCHAR(16) NOT NULL DEFAULT 'key';

-- Browser sessions: only the sha256 of the cookie's token is kept.
CREATE TABLE `user_sessions` (
    `tokenHash` CHAR(64) NOT NULL,
    `userId` VARCHAR(36) NOT NULL,
    `csrfToken` VARCHAR(64) NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `lastUsedAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    INDEX `user_sessions_userId_idx`(`userId`),
    PRIMARY KEY (`tokenHash`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- One-time password reset links (sha256 of the token).
CREATE TABLE `password_resets` (
    `tokenHash` CHAR(64) NOT NULL,
    `userId` VARCHAR(36) NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `expiresAt` DATETIME(3) NOT NULL,
    `usedAt` DATETIME(3) NULL,

    INDEX `password_resets_userId_idx`(`userId`),
    PRIMARY KEY (`tokenHash`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- Device login codes shown at /cli-login (sha256 of the upper-case code).
CREATE TABLE `device_codes` (
    `codeHash` CHAR(64) NOT NULL,
    `userId` VARCHAR(36) NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `expiresAt` DATETIME(3) NOT NULL,
    `usedAt` DATETIME(3) NULL,

    INDEX `device_codes_userId_idx`(`userId`),
    INDEX `device_codes_expiresAt_idx`(`expiresAt`),
    PRIMARY KEY (`codeHash`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- AddForeignKey
ALTER TABLE `user_sessions` ADD CONSTRAINT `user_sessions_userId_fkey` FOREIGN KEY (`userId`) REFERENCES `users`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE `password_resets` ADD CONSTRAINT `password_resets_userId_fkey` FOREIGN KEY (`userId`) REFERENCES `users`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE `device_codes` ADD CONSTRAINT `device_codes_userId_fkey` FOREIGN KEY (`userId`) REFERENCES `users`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
