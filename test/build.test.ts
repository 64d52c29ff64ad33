/**
 * The production start: `npm run build` compiles `src/` to `dist/` (esbuild, one module per
 * file, with source maps), and `npm start` runs `dist/main.js` with plain node, with no tsx and
 * nothing in NODE_OPTIONS, on the embedded emulator: it answers the first query and exits 0 on
 * SIGTERM.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, useProcesses, waitFor } from './helpers/process.js';
import { postGraphQL } from './helpers/stack.js';

const run = promisify(execFile);
const processes = useProcesses();

const scripts = (JSON.parse(readFileSync(`${PROJECT_ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts;
/** `npm start`'s command, `node [flags] dist/main.js`, split into its words. */
const [startCommand, ...startArgs] = (scripts['start'] ?? '').split(' ');
/** The node flags `npm start` runs `dist/main.js` with. */
const startFlags = startArgs.slice(0, -1);

/** The files under `dir` (relative to it, `/`-separated), directories left out. */
function filesUnder(dir: string): string[] {
  return readdirSync(`${PROJECT_ROOT}${dir}`, { recursive: true, encoding: 'utf8' })
    .map((file) => file.split('\\').join('/'))
    .filter((file) => statSync(`${PROJECT_ROOT}${dir}/${file}`).isFile())
    .sort();
}

// One build for the file: both describes run what it wrote.
beforeAll(async () => {
  // What an earlier build left for a module src/ no longer has.
  mkdirSync(`${PROJECT_ROOT}dist/removed`, { recursive: true });
  writeFileSync(`${PROJECT_ROOT}dist/removed/module.js`, 'export {};\n');
  writeFileSync(`${PROJECT_ROOT}dist/renamed.js`, 'export {};\n');

  await run('npm', ['run', '--silent', 'build'], { cwd: PROJECT_ROOT });
}, 60_000);

describe('npm run build', () => {
  it('compiles each src/**/*.ts to the same path under dist/ as .js with its source map, and removes what src/ no longer has', () => {
    const expected = filesUnder('src')
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
      .flatMap((file) => [file.replace(/\.ts$/, '.js'), file.replace(/\.ts$/, '.js.map')]);

    expect(filesUnder('dist')).toEqual(expected.sort());
    expect(expected).toContain('main.js');
    expect(expected).toContain('__generated__/resolvers-types.js');
  });

  it('leaves no import in dist/ that needs tsx or a TypeScript loader', () => {
    const specifiers = filesUnder('dist')
      .filter((file) => file.endsWith('.js'))
      .flatMap((file) => [...readFileSync(`${PROJECT_ROOT}dist/${file}`, 'utf8').matchAll(/(?:\bfrom|\bimport\s*\(?)\s*['"]([^'"]+)['"]/g)].map((match) => match[1] ?? ''));

    expect(specifiers).toContain('./config.js');
    expect(specifiers.filter((specifier) => /\.(?:c|m)?tsx?$/.test(specifier) || /^tsx(?:\/|$)/.test(specifier))).toEqual([]);
  });

  it('maps stack traces of the compiled code back to src/*.ts lines with NODE_OPTIONS=--enable-source-maps', async () => {
    const program = "import { loadConfig } from './dist/config.js'; try { loadConfig(['--port', 'eighty'], {}); } catch (error) { console.log(error.stack); }";

    const { stdout } = await run(process.execPath, [...startFlags, '--input-type=module', '--eval', program], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env['PATH'] ?? '', NODE_OPTIONS: '--enable-source-maps' },
    });

    expect(stdout).toMatch(/PORT must be an integer/);
    expect(stdout).toMatch(/\/src\/config\.ts:\d+:\d+\)?\n/);
    expect(stdout).not.toMatch(/dist\/config\.js/);
  });
});

describe('npm start', () => {
  it('builds on prestart, then runs dist/main.js with plain node', () => {
    // The build's own command rather than `npm run build`: one npm start-up less before each start.
    expect(scripts['prestart']).toBe(scripts['build']);
    expect(startCommand).toBe('node');
    expect(startArgs.at(-1)).toBe('dist/main.js');
    expect(startFlags.filter((flag) => !flag.startsWith('--') || /^--(?:import|loader|experimental-loader|require)\b/.test(flag))).toEqual([]);
  });

  it('runs the compiled gateway on the embedded emulator, answers a query, and exits 0 on SIGTERM', async () => {
    const { child, output, exited } = processes.startNode([...startFlags, 'dist/main.js']);

    const [, url = ''] = await waitFor(output, /GraphQL gateway ready: (http:\/\/\S+\/graphql)/, 20_000);
    expect(output()).toMatch(/Upstreams: embedded emulator/);
    expect(await postGraphQL(url, '{ pet(id: 1) { name } }', {}, { api_key: 'demo' })).toEqual({ status: 200, data: { pet: { name: 'Cat 1' } } });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output()).toMatch(/\nstopped\n/);
  }, 30_000);
});
