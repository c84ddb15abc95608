-- The document of a session indexed whole carries its `outline` since this version (where its
-- fragments and exchanges are, src/domain/search-documents.ts): a search marks its matching
-- exchanges from it instead of cutting and scanning the text of every hit. Documents indexed
-- before it have none, and their outline is computed at search time, as before. Queue once, for
-- the main index, every session that can be indexed whole: the worker rebuilds their documents
-- and pushes them (their hash changed), while search keeps answering from the index as it is. A
-- session indexed whole has at most 65,536 characters (fitsWhole), so at most 262,144 bytes of
-- markdown; larger ones are left as they are (their fragments are documents of their own).
INSERT INTO `search_outbox` (`op`, `userId`, `projectId`, `sessionId`)
SELECT 'compact', `userId`, `projectId`, `id` FROM `sessions` WHERE `markdownSize` <= 262144;
