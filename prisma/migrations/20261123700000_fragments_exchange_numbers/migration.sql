-- Search documents of large sessions (fragments, src/search/documents.ts) carry the reader's
-- exchange number since this version; fragments indexed before it link to "Part n" instead of
-- the exchange. Queue those sessions once for the main index: the worker rebuilds their
-- documents and pushes only those whose content hash changed (the fragments; a session indexed
-- whole is left as it is), while search keeps answering from the index as it is.
-- A session has fragments only when it cannot be indexed whole (fitsWhole): over 65,536
-- characters, or over 60,000 engine positions (words + 8 per separator); either needs more than
-- 7,500 bytes of markdown, so those are the sessions queued.
INSERT INTO `search_outbox` (`op`, `userId`, `projectId`, `sessionId`)
SELECT 'compact', `userId`, `projectId`, `id` FROM `sessions` WHERE `markdownSize` > 7500;
