/**
 * Compiles `src/` to `dist/` for production, where the gateway runs with plain `node` and no
 * TypeScript loader (`npm run build`; `npm start` runs it first, on `prestart`). Each `src/**\/*.ts`
 * becomes one `dist/**\/*.js`, in the same place, with no bundling: modules find the SDL and the
 * OpenAPI documents through `import.meta.url` (`../schema/`, `../../schema/`), so `dist/` has to
 * mirror `src/` and sit beside it at the project root. Type checking stays with `tsc --noEmit`;
 * esbuild only strips the types, which is why this takes well under a second.
 */
import { readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** Paths are relative to the project, wherever the script is run from. */
const PROJECT = fileURLToPath(new URL('../', import.meta.url));
const SOURCE = 'src';
const OUTPUT = 'dist';

/** Every module under `src/` (generated code included); declaration files have nothing to emit. */
function sourceFiles(): string[] {
  return readdirSync(`${PROJECT}${SOURCE}`, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => `${SOURCE}/${file.split('\\').join('/')}`)
    .sort();
}

async function main(): Promise<void> {
  const started = performance.now();
  // A module deleted or renamed in src/ must not live on in dist/ and still be importable.
  rmSync(`${PROJECT}${OUTPUT}`, { recursive: true, force: true });
  const entryPoints = sourceFiles();
  await build({
    absWorkingDir: PROJECT,
    entryPoints,
    outbase: SOURCE,
    outdir: OUTPUT,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Linked maps let `node --enable-source-maps` (as `npm start` and the image run it) report
    // stack frames as src/*.ts lines. Without sourcesContent: the maps do not ship the source.
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
  });
  // On stderr: on `npm start` stdout is the gateway's (`npm start -- --print-schema > pets.graphql`).
  console.error(`${OUTPUT}/: ${entryPoints.length} modules compiled from ${SOURCE}/ in ${Math.round(performance.now() - started)} ms`);
}

main().catch((error: unknown) => {
  // esbuild has already printed its diagnostics; the message only repeats them in one line.
  console.error(`build failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
