-- A device code asked for with a device access token remembers when that token ends (an hour),
-- so that the device token it is exchanged for ends no later than it, not with the years of the
-- device session the access token belongs to.
-- AlterTable
ALTER TABLE `device_codes` ADD COLUMN `parentExpiresAt` DATETIME(3) NULL;
