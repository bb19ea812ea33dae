import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The dashboard: a Preact single-page app served by the gateway under /dashboard
 * (src/modules/dashboard). `npm run build` writes it to dist/dashboard after the
 * gateway's own build (nest build empties dist/ first). JSX goes through Vite's own
 * transform with Preact's automatic runtime, so no Babel and no framework plugin.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  publicDir: 'public',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 300,
  },
  // `npx vite --config dashboard/vite.config.mts` for development, against a gateway on :8787.
  server: { proxy: { '/v1': 'http://127.0.0.1:8787', '/health': 'http://127.0.0.1:8787' } },
});
