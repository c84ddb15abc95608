import path from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The console: web/ → dist/web (index.html + content-hashed files under /assets/). Served by the
 * API process itself (src/http/console.ts). Nothing is inlined as a data: URL and no inline script
 * is emitted, so the console's strict CSP holds.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react()],
  build: {
    outDir: path.resolve(import.meta.dirname, '../dist/web'),
    emptyOutDir: true,
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
  server: {
    // `npx vite web` during development: the API runs on :3000 (npm start).
    proxy: { '/api': 'http://127.0.0.1:3000' },
  },
});
