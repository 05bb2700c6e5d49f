import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web app (docs/web-app.md): built into web/dist, which the API serves at /app. Preact's automatic JSX runtime;
 * no inline script or style in the output, so the API's Content-Security-Policy needs no 'unsafe-inline'.
 */
const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/app/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: `${here}dist`,
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});
