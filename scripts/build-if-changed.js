// @ts-check
/**
 * Keeps `dist/` current, cheaply, without ever deleting code a running gateway may still load.
 * `npm run build` and `npm start` (on `prestart`) run it:
 *
 *     node scripts/build-if-changed.js scripts/build.ts [--modules] [--quiet]
 *
 * Plain JavaScript, run by plain `node`: on every start it only hashes the inputs of the build
 * (a few milliseconds), where tsx alone would cost most of a second and esbuild more. Only when
 * they changed does it run the build script (TypeScript, with tsx: it loads esbuild). Its types
 * are checked from the JSDoc by `scripts/tsconfig.json` (`npm run typecheck`). It writes to
 * stderr only (stdout is the gateway's: `npm run --silent start -- --print-schema > x.graphql`),
 * and with `--quiet` (on `prestart`) nothing at all when `dist/` is up to date.
 *
 * ## The layout of dist/
 * - `dist/builds/<id>/`: one build each (`main.js`, its chunks, their source maps). `<id>` names
 *   the kind of build (`bundle`, or `modules` for `--modules`) and a hash of the content of every
 *   input: each file under `src/` and `scripts/`, `package.json`, `package-lock.json`, the tree
 *   npm installed (`node_modules/.package-lock.json`) and `tsconfig.json`. Timestamps play no part:
 *   a `touch` or a fresh clone of the same sources builds nothing; an edit, a checkout or an
 *   install does. A build is written into `dist/builds/.tmp-<id>-<pid>/` and renamed into place
 *   whole, and nothing writes into it afterwards, so a module deleted from `src/` cannot be
 *   found in a later build.
 * - `dist/main.js`: a few lines that import the current build's `main.js` (and record the build
 *   before it). What `npm start`, the image and the package's `bin` run. It is replaced by a
 *   rename, never rewritten in place: a process that starts reads the old one or the new one.
 *
 * ## Why builds are kept
 * A gateway loads some chunks only when first needed (GraphiQL's page on its first request, the
 * Redis client, the gateway of a cluster worker forked again after a crash). A build that deleted
 * the previous one's files made a gateway started before it answer its first GraphiQL request
 * with ERR_MODULE_NOT_FOUND. Now a running gateway keeps loading the build it started from:
 * `dist/main.js` writes `dist/builds/<id>/in-use-by-<pid>` at start (removed at exit) and points
 * `process.argv[1]` at the build's own `main.js`, so that the cluster's workers, forked later, run
 * the same build.
 *
 * ## What is removed (after every run)
 * A folder in `dist/builds/` is removed when it is neither the current build, nor the build
 * before it (a process that read `dist/main.js` just before the switch may be about to load
 * it), nor named by an `in-use-by-<pid>` file of a process that is still alive. A `.tmp-` folder
 * or `.main-` file whose builder is no longer alive is removed. Anything else in `dist/` beside
 * `main.js` and `builds/` (what the single-folder layout of earlier versions wrote) is removed.
 * `rm -rf dist` is always safe when no gateway of this checkout runs.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The project root (with a trailing slash), wherever the script is run from. */
const PROJECT = fileURLToPath(new URL('../', import.meta.url));
const DIST = `${PROJECT}dist/`;
const BUILDS = `${DIST}builds/`;
const ENTRY = `${DIST}main.js`;

/**
 * What the build's output depends on, relative to the project: folders (every file under them)
 * and files (one that does not exist is left out).
 */
const INPUTS = [
  'src',
  'scripts',
  'package.json',
  'package-lock.json',
  'node_modules/.package-lock.json',
  'tsconfig.json',
];

/** How many hex digits of the inputs' SHA-256 name a build: 64 bits. */
const ID_DIGITS = 16;

/** Every file of the inputs, as sorted paths relative to the project (`/`-separated). */
function inputFiles() {
  return INPUTS.flatMap((input) => {
    const path = `${PROJECT}${input}`;
    if (!existsSync(path)) return [];
    if (!statSync(path).isDirectory()) return [input];
    return readdirSync(path, { recursive: true, encoding: 'utf8' })
      .map((file) => `${input}/${file.split('\\').join('/')}`)
      .filter((file) => statSync(`${PROJECT}${file}`).isFile());
  }).sort();
}

/**
 * The build's name: its kind and a hash of each input file's path and content.
 * @param {'bundle' | 'modules'} kind
 * @returns {string}
 */
function buildId(kind) {
  const hash = createHash('sha256').update(`${kind}\0`);
  for (const file of inputFiles()) {
    const content = readFileSync(`${PROJECT}${file}`);
    hash.update(`${file}\0${content.length}\0`).update(content);
  }
  return `${kind}-${hash.digest('hex').slice(0, ID_DIGITS)}`;
}

/**
 * The build `dist/main.js` runs and the one it ran before, from the entry's own text.
 * @returns {{ current?: string, previous?: string }}
 */
function entryBuilds() {
  let text = '';
  try {
    text = readFileSync(ENTRY, 'utf8');
  } catch {
    return {};
  }
  return {
    current: /^await import\("\.\/builds\/([\w-]+)\/main\.js"\);$/m.exec(text)?.[1],
    previous: /^\/\/ The build before it: ([\w-]+)\.$/m.exec(text)?.[1],
  };
}

/**
 * The text of `dist/main.js` for build `id`.
 * @param {string} id
 * @param {string | undefined} previous
 */
function entryText(id, previous) {
  return `#!/usr/bin/env node
// Written by scripts/build-if-changed.js (which explains the layout of dist/): runs dist/builds/${id}/.
${previous === undefined ? '' : `// The build before it: ${previous}.\n`}import { rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
const build = new URL('./builds/${id}/', import.meta.url);
// While this process runs, later builds leave this one in place: its chunks are loaded on demand.
const inUse = new URL(\`in-use-by-\${process.pid}\`, build);
try {
  writeFileSync(inUse, '');
  process.on('exit', () => rmSync(inUse, { force: true }));
} catch {
  // A dist/ this process may not write (the image's): nothing builds or prunes there.
}
// The cluster's workers run the script argv[1] names: the build this process runs.
process.argv[1] = fileURLToPath(new URL('main.js', build));
await import("./builds/${id}/main.js");
`;
}

/**
 * Whether process `pid` is alive (one of another user counts).
 * @param {number} pid
 */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}

/**
 * Runs the build script with tsx into a folder of its own, then renames it to `dist/builds/<id>/`.
 * @param {string} script the build script, relative to the project
 * @param {string} id
 * @param {boolean} modules
 */
function build(script, id, modules) {
  const temporary = `${BUILDS}.tmp-${id}-${process.pid}`;
  const args = ['--import', 'tsx', script, '--outdir', temporary, ...(modules ? ['--modules'] : [])];
  // The build's stdout goes to stderr too: on `npm start -- --print-schema > schema.graphql`,
  // stdout is the gateway's.
  const result = spawnSync(process.execPath, args, { cwd: PROJECT, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) {
    rmSync(temporary, { recursive: true, force: true });
    throw new Error(`${script} ${result.error?.message ?? `exited with ${result.status ?? result.signal}`}`);
  }
  try {
    renameSync(temporary, `${BUILDS}${id}`);
  } catch (error) {
    // Another build of the same inputs got there first (two starts at once): the same output.
    rmSync(temporary, { recursive: true, force: true });
    if (!existsSync(`${BUILDS}${id}/main.js`)) throw error;
  }
}

/**
 * Points `dist/main.js` at build `id`: written beside it, then renamed over it.
 * @param {string} id
 * @param {string | undefined} previous
 */
function switchTo(id, previous) {
  const temporary = `${BUILDS}.main-${process.pid}.js`;
  writeFileSync(temporary, entryText(id, previous), { mode: 0o755 });
  renameSync(temporary, ENTRY);
}

/**
 * The name's trailing process id, for what a build in progress writes (`.tmp-<id>-<pid>`, `.main-<pid>.js`).
 * @param {string} name
 */
function builderPid(name) {
  return Number(/-(\d+)(?:\.js)?$/.exec(name)?.[1] ?? 0);
}

/**
 * Removes what no process may load any more (the rule is in this file's first comment).
 * @param {string} current
 * @param {string | undefined} previous
 * @returns {string[]} what it removed, relative to dist/
 */
function prune(current, previous) {
  const removed = [];
  for (const name of readdirSync(DIST)) {
    if (name === 'main.js' || name === 'builds') continue;
    rmSync(`${DIST}${name}`, { recursive: true, force: true });
    removed.push(name);
  }
  for (const name of readdirSync(BUILDS)) {
    const inProgress = name.startsWith('.tmp-') || name.startsWith('.main-');
    if (inProgress ? alive(builderPid(name)) : name === current || name === previous) continue;
    const users = inProgress
      ? []
      : readdirSync(`${BUILDS}${name}`).flatMap((file) => /^in-use-by-(\d+)$/.exec(file)?.[1] ?? []);
    if (users.some((pid) => alive(Number(pid)))) continue;
    rmSync(`${BUILDS}${name}`, { recursive: true, force: true });
    removed.push(`builds/${name}`);
  }
  return removed;
}

function main() {
  const argv = process.argv.slice(2);
  const script = argv.find((arg) => !arg.startsWith('--'));
  if (script === undefined) throw new Error('usage: node scripts/build-if-changed.js scripts/build.ts [--modules]');
  const modules = argv.includes('--modules');
  const quiet = argv.includes('--quiet');
  const started = performance.now();
  const id = buildId(modules ? 'modules' : 'bundle');
  const { current, previous } = entryBuilds();
  let what = `up to date: dist/main.js runs dist/builds/${id}/, from these inputs`;
  if (current !== id || !existsSync(`${BUILDS}${id}/main.js`)) {
    const built = !existsSync(`${BUILDS}${id}/main.js`);
    if (built) build(script, id, modules);
    switchTo(id, current === id ? previous : current);
    what = built
      ? `built dist/builds/${id}/ (no build of these inputs yet); dist/main.js runs it`
      : `dist/builds/${id}/ was built from these inputs before; dist/main.js runs it again`;
  } else if (quiet) {
    prune(id, previous);
    return;
  }
  const removed = prune(id, entryBuilds().previous);
  const pruned = removed.length > 0 ? `; removed ${removed.join(', ')}` : '';
  console.error(`dist/: ${what}${pruned} (${Math.round(performance.now() - started)} ms)`);
}

try {
  main();
} catch (error) {
  console.error(`build failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
