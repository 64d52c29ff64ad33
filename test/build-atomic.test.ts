/**
 * `npm start` and `npm run build` build only when the inputs of the build changed (by content),
 * and a build never takes away code a running gateway loads later: each build is a folder of its
 * own under `dist/builds/`, `dist/main.js` switches to it by a rename, and builds still in use
 * are kept (scripts/build-if-changed.js). The documented commands print clean output.
 *
 * Everything here runs in a copy of the project in a temporary folder (src/, scripts/, schema/,
 * package.json, package-lock.json, tsconfig.json; node_modules/ linked), whose sources the tests
 * change; the project's own src/ and dist/ are never touched.
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, useProcesses, waitFor } from './helpers/process.js';
import { postGraphQL } from './helpers/stack.js';

const processes = useProcesses();
/** The copy of the project the tests build and start. */
let copy = '';

/** Runs `command` in the copy, with PATH and HOME alone of this environment (no NODE_OPTIONS, no npm_config_*). */
async function runInCopy(command: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(command, args, {
    cwd: copy,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? copy },
  });
}

/** `npm run build` in the copy; what it says is on stderr. */
const build = async (...args: string[]) =>
  (await runInCopy('npm', ['run', '--silent', 'build', ...(args.length > 0 ? ['--', ...args] : [])])).stderr;

/** The build `dist/main.js` runs (its folder name under dist/builds/), and the entry's text and time of change. */
function entry(): { build: string; text: string; changed: number } {
  const text = readFileSync(`${copy}/dist/main.js`, 'utf8');
  return {
    build: /^await import\("\.\/builds\/([\w-]+)\/main\.js"\);$/m.exec(text)?.[1] ?? '',
    text,
    changed: statSync(`${copy}/dist/main.js`).mtimeMs,
  };
}

const builds = () => readdirSync(`${copy}/dist/builds`).sort();

/** The code of build `id`: each file, with the identity of what is on disk (inode, time of change). */
function codeOf(id: string): Record<string, string> {
  const dir = `${copy}/dist/builds/${id}`;
  return Object.fromEntries(
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((file) => /\.js(?:\.map)?$/.test(file))
      .map((file) => {
        const stat = statSync(`${dir}/${file}`);
        return [file, `${stat.ino}@${stat.mtimeMs}`];
      }),
  );
}

/** Changes a source of the copy: one more line in src/config/load.ts (the bundle then differs). */
let edits = 0;
function changeSource(): void {
  edits += 1;
  const file = `${copy}/src/config/load.ts`;
  writeFileSync(file, `${readFileSync(file, 'utf8')}export const BUILD_TEST_EDIT_${edits} = ${edits};\n`);
}

beforeAll(async () => {
  copy = mkdtempSync(`${tmpdir()}/gateway-build-`);
  for (const path of ['src', 'scripts', 'schema', 'package.json', 'package-lock.json', 'tsconfig.json'])
    cpSync(`${PROJECT_ROOT}${path}`, `${copy}/${path}`, { recursive: true });
  symlinkSync(`${PROJECT_ROOT}node_modules`, `${copy}/node_modules`, 'dir');
  await build();
}, 60_000);

afterAll(() => {
  if (copy !== '') rmSync(copy, { recursive: true, force: true });
});

describe('a build while a gateway runs', () => {
  it('leaves the running gateway its own build: after two rebuilds of changed sources its first GraphiQL page and a query answer 200', async () => {
    const { child, output, exited } = processes.startNode(['dist/main.js'], {}, { cwd: copy });
    const [, url = ''] = await waitFor(output, /GraphQL gateway ready: (http:\/\/\S+\/graphql)/, 20_000);
    const started = entry().build;
    const code = codeOf(started);

    // Two builds: the first one's build is then neither the current one nor the one before it.
    changeSource();
    expect(await build()).toMatch(/built dist\/builds\/bundle-\w+\//);
    changeSource();
    expect(await build()).toMatch(/built dist\/builds\/bundle-\w+\//);
    expect(entry().build).not.toBe(started);
    // Not one of its files deleted, rewritten or replaced.
    expect(codeOf(started)).toEqual(code);

    // GraphiQL's page is in a chunk loaded on its first request.
    const page = await fetch(url, { headers: { accept: 'text/html' } });
    expect({ status: page.status, html: /<html/i.test(await page.text()) }).toEqual({ status: 200, html: true });
    expect(await postGraphQL(url, '{ pet(id: 1) { name } }', {}, { api_key: 'demo' })).toEqual({
      status: 200,
      data: { pet: { name: 'Cat 1' } },
    });

    // Once it has stopped, the next run removes its build, and keeps the current one and the one before.
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(await build()).toContain(`removed builds/${started}`);
    expect(builds()).toHaveLength(2);
    expect(builds()).toContain(entry().build);
  }, 90_000);
});

describe('when a build runs', () => {
  it('builds nothing on unchanged inputs: npm run build and npm start leave dist/ as it was', async () => {
    await build();
    const before = { entry: entry(), builds: builds() };

    const second = await build();
    const start = await runInCopy('npm', ['run', '--silent', 'start', '--', '--help']);

    expect(second).toMatch(/^dist\/: up to date: dist\/main\.js runs dist\/builds\/bundle-\w+\/, from these inputs/);
    expect(second).not.toMatch(/^build:|built dist/m);
    // npm start's check (prestart) says nothing when there is nothing to do.
    expect(start.stderr).toBe('');
    expect(start.stdout).toMatch(/^Usage: /);
    expect({ entry: entry(), builds: builds() }).toEqual(before);
  }, 60_000);

  it('decides by content, not time: a source touched without a change builds nothing', async () => {
    await build();
    const before = entry();
    const later = new Date(Date.now() + 60_000);
    utimesSync(`${copy}/src/config/load.ts`, later, later);

    expect(await build()).toMatch(/^dist\/: up to date: /);
    expect(entry()).toEqual(before);
  }, 60_000);

  it('rebuilds a changed source into a new build, and goes back to an earlier build without building', async () => {
    await build();
    const before = entry().build;
    const original = readFileSync(`${copy}/src/config/load.ts`, 'utf8');

    changeSource();
    const changed = await build();
    const after = entry().build;
    writeFileSync(`${copy}/src/config/load.ts`, original);
    const reverted = await build();

    expect(changed).toMatch(/^build: src\/main\.ts bundled in \d+ files/m);
    expect(changed).toContain(`built dist/builds/${after}/`);
    expect(after).not.toBe(before);
    expect(readFileSync(`${copy}/dist/builds/${after}/main.js`, 'utf8')).not.toBe('');
    expect(reverted).not.toMatch(/^build:/m);
    expect(reverted).toContain(`dist/builds/${before}/ was built from these inputs before`);
    expect(entry().build).toBe(before);
  }, 90_000);

  it('--modules writes one module per source file into a build of its own, which dist/main.js runs', async () => {
    const modules = await build('--modules');
    const id = entry().build;
    const schema = await runInCopy(process.execPath, ['dist/main.js', '--print-schema']);
    const back = await build();

    expect(modules).toMatch(/^build: \d+ modules compiled from src\//m);
    expect(id).toMatch(/^modules-\w+$/);
    expect(readdirSync(`${copy}/dist/builds/${id}`)).toEqual(expect.arrayContaining(['config', 'schema.js']));
    expect(schema.stdout).toMatch(/^schema\b/);
    expect(back).toMatch(/was built from these inputs before/);
    expect(entry().build).toMatch(/^bundle-\w+$/);
  }, 90_000);
});

describe('the documented commands for the schema and the help', () => {
  /** Every line of `sdl` is SDL: it parses, and begins with a definition, not npm's `> …` lines. */
  function expectOnlySdl(sdl: string): void {
    expect(sdl).toMatch(/^(?:schema|type|extend|directive|scalar|enum|input|interface|union|""")\b/);
    expect(sdl.split('\n').filter((line) => line.startsWith('>'))).toEqual([]);
    expect(() => parse(sdl)).not.toThrow();
  }

  it('npm run --silent start -- --print-schema > schema.graphql writes the SDL alone, even when it builds first', async () => {
    changeSource();

    const { stdout, stderr } = await runInCopy('npm', ['run', '--silent', 'start', '--', '--print-schema']);

    expectOnlySdl(stdout);
    expect(stderr).toMatch(/built dist\/builds\//);
    expect(stdout).toBe((await runInCopy(process.execPath, ['dist/main.js', '--print-schema'])).stdout);
  }, 60_000);

  it('npx petstore-gateway --print-schema (the package bin, dist/main.js) writes the SDL alone', async () => {
    await build();

    const { stdout, stderr } = await runInCopy('npx', ['--no-install', 'petstore-gateway', '--print-schema']);

    expectOnlySdl(stdout);
    expect(stderr).toBe('');
  }, 60_000);
});
