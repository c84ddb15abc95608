-- An invitation dies with its creator's membership or admin role: removing or demoting an admin
-- withdraws the open invitations they made, for good.
-- AlterTable
ALTER TABLE `team_invitations` ADD COLUMN `withdrawnAt` DATETIME(3) NULL;
