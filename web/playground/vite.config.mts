import path from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The GraphQL playground: web/playground → dist/playground (index.html + content-hashed files
 * under assets/, Monaco's workers included). Served by the API process at GET /api/v1/graphql and
 * /api/v1/graphql/assets/* (src/graphql/playground.ts). No inline script, no CDN: it works offline.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/api/v1/graphql/',
  plugins: [react()],
  build: {
    outDir: path.resolve(import.meta.dirname, '../../dist/playground'),
    emptyOutDir: true,
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
    // Monaco is large (the editor alone is ~3 MB); it is loaded once and cached as immutable.
    chunkSizeWarningLimit: 8000,
    rolldownOptions: {
      onwarn(warning, warn) {
        // @graphiql/react marks some modules "use no memo" (a React Compiler hint): meaningless in
        // a bundle, and the bundler says so for each of them.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  worker: { format: 'es' },
});
