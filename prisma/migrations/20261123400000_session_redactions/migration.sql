-- Secrets found in an upload, per rule (contract §14): [{"rule": "...", "count": N}], never a value.
ALTER TABLE `sessions` ADD COLUMN `redactionsJson` VARCHAR(4000) NOT NULL DEFAULT '[]';
