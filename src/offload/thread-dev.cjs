// The worker-thread entry when the service runs from TypeScript sources (tsx, ts-jest): loads
// tasks.ts through tsx's require hook. Built code (dist/) loads tasks.js directly instead.
require('tsx/cjs/api').register();
module.exports = require('./tasks.ts');
