/**
 * Compiles the gateway for production, where it runs with plain `node` and no TypeScript loader,
 * into the folder given by `--outdir`. `npm run build` and `npm start` (on `prestart`) do not run
 * it directly: `scripts/build-if-changed.js` does, only when the inputs of the build changed, into
 * a new folder `dist/builds/<id>/`, then points `dist/main.js` at it (see that script for the
 * layout of `dist/`, and why a build never overwrites or deletes the code a running gateway loads).
 *
 * By default one bundle: `main.js` and the chunks it loads (`chunks/`), holding `src/` and the
 * dependencies it imports. A process then reads a handful of files at start instead of about 60
 * of ours and several hundred of its dependencies' (start 0.8 s instead of 1.4 s, and about 10 MB
 * less resident memory, in `bench/PROFILE.md`). Code splitting keeps what a process may never
 * need in chunks of its own, loaded on first use: the worker's gateway in a cluster primary,
 * GraphiQL, the embedded emulator. The few modules loaded by name at run time (the OpenTelemetry
 * exporter, on demand) still come from `node_modules/`, and the SDL and OpenAPI documents from
 * `schema/` (see `src/project-files.ts`).
 *
 * `--modules` writes one `*.js` per `src/**\/*.ts` instead, unbundled, so that a CPU profile names
 * each of our modules (`npm run bench -- --profile`).
 *
 * Type checking stays with `tsc --noEmit`; esbuild only strips the types, which is why this
 * takes about a second.
 */
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type Plugin } from 'esbuild';

/** Paths are relative to the project, wherever the script is run from. */
const PROJECT = fileURLToPath(new URL('../', import.meta.url));
const SOURCE = 'src';

/** Every module under `src/` (generated code included); declaration files have nothing to emit. */
function sourceFiles(): string[] {
  return readdirSync(`${PROJECT}${SOURCE}`, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => `${SOURCE}/${file.split('\\').join('/')}`)
    .sort();
}

/**
 * graphql-js in its ES module build, for every module that imports or requires it. esbuild
 * otherwise takes its CommonJS build (the `main` field), and an ES module that imports it (our
 * code, `@graphql-tools/executor`) then reaches each function through a getter of esbuild's
 * interop object, on every call: an eighth of the CPU of a list query went to those getters
 * (bench/PROFILE.md). The ES module build is the same code; sending every importer to it, rather
 * than preferring `module` fields in general, keeps one copy of graphql-js in the bundle (two
 * copies would fail each other's `instanceof` checks).
 */
const graphqlAsModule: Plugin = {
  name: 'graphql-as-module',
  setup(build) {
    // Its real path, as esbuild resolves every other import: through a symlinked node_modules/ (a
    // copy of the project beside this one), the plugin's path and esbuild's would be two copies.
    const root = realpathSync(`${PROJECT}node_modules/graphql`);
    // A deep import may name its CommonJS file (`graphql/execution/values.js`, as the live query
    // store does): it goes to the module of the same name too.
    build.onResolve({ filter: /^graphql(\/[\w/-]+)?(\.js)?$/ }, ({ path }) => {
      const subpath = path.slice('graphql'.length).replace(/\.js$/, '');
      const file = [`${root}${subpath || '/index'}.mjs`, `${root}${subpath}/index.mjs`].find((candidate) =>
        existsSync(candidate),
      );
      return file === undefined ? undefined : { path: file };
    });
  },
};

/** The bundle: `src/main.ts` and what it imports, split where it imports on demand. */
const BUNDLE: BuildOptions = {
  entryPoints: [`${SOURCE}/main.ts`],
  bundle: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  plugins: [graphqlAsModule],
  // Some dependencies are CommonJS and call require(); an ES module bundle has no require of its
  // own, so each file gets one, resolving from its place in dist/ (node: built-ins, node_modules/).
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
};

/** One module per source file, in the same place: for profiles that name our modules. */
const MODULES: BuildOptions = { entryPoints: sourceFiles(), outbase: SOURCE, bundle: false };

/** The value of `--outdir <dir>` (or `--outdir=<dir>`): where this build writes. */
function outputDirectory(argv: readonly string[]): string | undefined {
  const index = argv.findIndex((arg) => arg === '--outdir' || arg.startsWith('--outdir='));
  if (index === -1) return undefined;
  const arg = argv[index] ?? '';
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[index + 1];
}

async function main(): Promise<void> {
  const started = performance.now();
  const argv = process.argv.slice(2);
  const perModule = argv.includes('--modules');
  const outdir = outputDirectory(argv);
  if (outdir === undefined)
    throw new Error('no --outdir: run `npm run build`, which writes dist/ and runs this script');
  // The folder is new: scripts/build-if-changed.js gives every build its own, so nothing an
  // earlier build wrote (a module since deleted from src/) can be found in it.
  const result = await build({
    ...(perModule ? MODULES : BUNDLE),
    absWorkingDir: PROJECT,
    outdir,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Linked maps let `node --enable-source-maps` report stack frames as src/*.ts lines (and
    // node_modules/ ones for dependencies). Without sourcesContent: the maps do not ship the source.
    sourcemap: 'linked',
    // V8 keeps the text of every module it loads, as a string on the heap. Without whitespace and
    // comments the text is about a third smaller, and it stays one byte per character: a comment
    // with one non-Latin-1 character (a typographic apostrophe in undici's) made the gateway's
    // chunk a two-byte string, 3.2 MB for 1.6 MB of file. Names are kept, so profiles still read.
    minifyWhitespace: true,
    // Lines stay short: node prints the line of an uncaught exception, and a chunk on one line
    // would be all of it.
    lineLimit: 200,
    sourcesContent: false,
    metafile: true,
    logLevel: 'warning',
  });
  const files = Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.js')).length;
  const what = perModule ? `${files} modules compiled from ${SOURCE}/` : `${SOURCE}/main.ts bundled in ${files} files`;
  // On stderr: on `npm start` stdout is the gateway's (`npm run --silent start -- --print-schema >
  // schema.graphql`). scripts/build-if-changed.js names the folder, and says where the build went.
  console.error(`build: ${what} in ${Math.round(performance.now() - started)} ms`);
}

main().catch((error: unknown) => {
  // esbuild has already printed its diagnostics; the message only repeats them in one line.
  console.error(`build failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
