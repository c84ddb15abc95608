-- Trusted documents: the GraphQL documents an app registered (POST /api/v1/graphql/documents),
-- each under its id, the sha256 of its text. The console's own come with the build, not from here.

CREATE TABLE `graphql_documents` (
    `app` VARCHAR(64) NOT NULL,
    `version` VARCHAR(64) NOT NULL,
    `id` VARCHAR(80) NOT NULL,
    `document` MEDIUMTEXT NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    INDEX `graphql_documents_id_idx`(`id`),
    PRIMARY KEY (`app`, `version`, `id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
