-- Credentials never outlive their source. A device login code remembers the key or device token
-- it was asked for with (NULL: asked for in the console with a browser session), so that the
-- device token it is exchanged for expires no later than that credential and is revoked with it.
-- AlterTable
ALTER TABLE `device_codes` ADD COLUMN `parentKeyId` VARCHAR(36) NULL;
