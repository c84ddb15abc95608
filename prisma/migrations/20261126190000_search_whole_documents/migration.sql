-- Search documents carry `whole` since this version (src/domain/search-documents.ts): a search
-- counts the sessions indexed whole with a facet count of it instead of the engine's exhaustive
-- `distinct`, which was most of the engine's time for a member of many teams (countedPage in
-- src/search/engine/adapter.ts). Documents indexed before it have no `whole` and are counted
-- exactly, but the slow way. Queue once, for the main index, every session that can be indexed
-- whole: the worker rebuilds their documents and pushes them (their hash changed), while search
-- keeps answering from the index as it is. A session indexed whole has at most 65,536 characters
-- (fitsWhole), so at most 262,144 bytes of markdown; larger ones are left as they are (a document
-- without `whole` is counted with the large sessions' ones, which is what they are).
INSERT INTO `search_outbox` (`op`, `userId`, `projectId`, `sessionId`)
SELECT 'compact', `userId`, `projectId`, `id` FROM `sessions` WHERE `markdownSize` <= 262144;
