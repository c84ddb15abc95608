-- GraphQL operation usage, for schema review: each operation (its document id, or the sha256 of
-- its normalised text) with the schema coordinates it touches, and how often each client ran it
-- per UTC day. At most 10,000 operations are kept (the least recently seen go first).

CREATE TABLE `graphql_operations` (
    `id` VARCHAR(80) NOT NULL,
    `name` VARCHAR(255) NULL,
    `coordinates` TEXT NOT NULL,
    `lastSeen` DATETIME(3) NOT NULL,

    INDEX `graphql_operations_lastSeen_idx`(`lastSeen`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE TABLE `graphql_operation_days` (
    `operationId` VARCHAR(80) NOT NULL,
    `client` VARCHAR(64) NOT NULL,
    `day` CHAR(10) NOT NULL,
    `count` BIGINT NOT NULL,
    `lastSeen` DATETIME(3) NOT NULL,

    INDEX `graphql_operation_days_day_idx`(`day`),
    PRIMARY KEY (`operationId`, `client`, `day`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

ALTER TABLE `graphql_operation_days` ADD CONSTRAINT `graphql_operation_days_operationId_fkey` FOREIGN KEY (`operationId`) REFERENCES `graphql_operations`(`id`) ON DELETE CASCADE ON UPDATE CASCADE;
