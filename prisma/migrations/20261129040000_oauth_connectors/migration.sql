-- MCP connectors that sign in (OAuth 2.1). A grant is a row of api_keys (kind "connector"): it is
-- listed, revoked, disabled and cut by a password change exactly as keys are. These tables hold
-- what the authorization server needs besides: registered clients, authorization codes (single
-- use, 10 minutes) and refresh tokens (rotated; a spent one used again revokes its grant).

CREATE TABLE `oauth_clients` (
    `id` VARCHAR(36) NOT NULL,
    `name` VARCHAR(100) NOT NULL,
    `metadata` TEXT NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `lastUsedAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    INDEX `oauth_clients_lastUsedAt_idx`(`lastUsedAt`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE TABLE `oauth_codes` (
    `codeHash` CHAR(64) NOT NULL,
    `clientId` VARCHAR(512) NOT NULL,
    `clientName` VARCHAR(100) NOT NULL,
    `userId` VARCHAR(36) NOT NULL,
    `redirectUri` TEXT NOT NULL,
    `codeChallenge` VARCHAR(128) NOT NULL,
    `scopes` VARCHAR(32) NOT NULL,
    `resource` VARCHAR(512) NOT NULL,
    `teamId` VARCHAR(36) NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `expiresAt` DATETIME(3) NOT NULL,
    `usedAt` DATETIME(3) NULL,
    `grantId` VARCHAR(36) NULL,

    INDEX `oauth_codes_expiresAt_idx`(`expiresAt`),
    PRIMARY KEY (`codeHash`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE TABLE `oauth_refresh_tokens` (
    `tokenHash` CHAR(64) NOT NULL,
    `grantId` VARCHAR(36) NOT NULL,
    `clientId` VARCHAR(512) NOT NULL,
    `resource` VARCHAR(512) NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `expiresAt` DATETIME(3) NOT NULL,
    `usedAt` DATETIME(3) NULL,

    INDEX `oauth_refresh_tokens_grantId_idx`(`grantId`),
    INDEX `oauth_refresh_tokens_expiresAt_idx`(`expiresAt`),
    PRIMARY KEY (`tokenHash`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
