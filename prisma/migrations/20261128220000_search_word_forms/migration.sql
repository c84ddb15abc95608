-- Search documents carry `forms` since this version (src/domain/word-forms.ts): the stems of
-- their words and the parts of their camelCase identifiers, so that `retries` finds `retrying`
-- and `retry backoff` finds `retryWithBackoff`. Documents indexed before it have none: they are
-- found by the words as written only, as before. Queue every session once for the main index: the
-- worker rebuilds their documents and pushes them (their hash changed), while search keeps
-- answering from the index as it is.
INSERT INTO `search_outbox` (`op`, `userId`, `projectId`, `sessionId`)
SELECT 'compact', `userId`, `projectId`, `id` FROM `sessions`;
