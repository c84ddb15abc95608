-- An Idempotency-Key is scoped to (user, method, path): `scope` is the sha256 (hex) of
-- "<METHOD> <path>". Keys stored before this change keep an empty scope, match no request and
-- expire with the others.
ALTER TABLE `idempotency_keys` ADD COLUMN `scope` CHAR(64) NOT NULL DEFAULT '' AFTER `userId`;
ALTER TABLE `idempotency_keys` ALTER COLUMN `scope` DROP DEFAULT;
ALTER TABLE `idempotency_keys` DROP PRIMARY KEY, ADD PRIMARY KEY (`userId`, `scope`, `idemKey`);
