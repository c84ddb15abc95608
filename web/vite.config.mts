import path from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The console: web/ → dist/web (index.html + content-hashed files under /assets/). Served by the
 * API process itself (src/http/console.ts). A second entry, share.html, is the public page of a
 * share link (/s/<token>, src/rest/share-page.ts, docs/shares.md): a small bundle of its own (no
 * React, no console navigation) that renders through the console's markdown sanitiser. Nothing is
 * inlined as a data: URL and no inline script is emitted, so the console's strict CSP holds.
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
    rollupOptions: {
      input: {
        index: path.resolve(import.meta.dirname, 'index.html'),
        share: path.resolve(import.meta.dirname, 'share.html'),
      },
      output: {
        // What both pages use (the markdown sanitiser with marked and DOMPurify): one chunk named for it.
        manualChunks: (id) => (/[\\/](marked|dompurify)[\\/]|[\\/]web[\\/]src[\\/]markdown\.ts$/.test(id) ? 'markdown' : undefined),
      },
    },
    target: 'es2022',
  },
  server: {
    // `npx vite web` during development: the API runs on :3000 (npm start).
    proxy: { '/api': 'http://127.0.0.1:3000' },
  },
});
