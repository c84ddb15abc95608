-- Read-only keys: a key's scopes, "read" or "read,write" (every existing key and device token
-- keeps full access).
ALTER TABLE `api_keys` ADD COLUMN `scopes` VARCHAR(32) NOT NULL DEFAULT 'read,write';
