/**
 * Builds the app into dist/ (npm run build): the page and its style as they are, and the code
 * bundled by esbuild into one module. The gateway's URL comes from GRAPHQL_URL; DEMO_CREDENTIALS=true
 * prefills the sign-in form with the embedded emulator's demo credentials.
 */
import { cpSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

rmSync('dist', { recursive: true, force: true });
cpSync('public', 'dist', { recursive: true });
await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/app.js',
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  define: {
    GRAPHQL_URL: JSON.stringify(process.env.GRAPHQL_URL ?? 'http://127.0.0.1:4000/graphql'),
    DEMO_CREDENTIALS: JSON.stringify(process.env.DEMO_CREDENTIALS === 'true'),
  },
  logLevel: 'warning',
});
