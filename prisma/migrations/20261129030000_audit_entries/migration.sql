-- The audit log: one row per security-relevant action (sign-ins, keys, accounts, teams, projects,
-- share links, exports and imports, retention), appended and never changed. No foreign keys: an
-- entry outlives the user, team or project it names. `actorLabel` is what the actor was called
-- when the entry was written (an email, `operator`, `anonymous`); `ip` is truncated (IPv4 /24,
-- IPv6 /48); `detail` is a small JSON object that never holds a secret.

CREATE TABLE `audit_entries` (
    `id` BIGINT NOT NULL AUTO_INCREMENT,
    `at` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `actorUserId` VARCHAR(36) NULL,
    `actorLabel` VARCHAR(320) NOT NULL,
    `action` VARCHAR(64) NOT NULL,
    `targetType` VARCHAR(32) NOT NULL,
    `targetId` VARCHAR(320) NULL,
    `teamId` VARCHAR(36) NULL,
    `projectId` VARCHAR(128) NULL,
    `ip` VARCHAR(64) NULL,
    `result` VARCHAR(16) NOT NULL,
    `detail` VARCHAR(2000) NULL,

    INDEX `audit_entries_at_idx`(`at`),
    INDEX `audit_entries_teamId_id_idx`(`teamId`, `id`),
    INDEX `audit_entries_actorUserId_id_idx`(`actorUserId`, `id`),
    INDEX `audit_entries_action_id_idx`(`action`, `id`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
