/**
 * The production start: `npm run build` bundles `src/main.ts` and its dependencies into a build
 * of its own, `dist/builds/<id>/` (esbuild: `main.js` and the chunks it loads, with source maps),
 * which `dist/main.js` imports; `npm start` runs `dist/main.js` with plain node, with no tsx and
 * nothing in NODE_OPTIONS, on the embedded emulator: it answers the first query and exits 0 on
 * SIGTERM. (What a build keeps for gateways already running, and when it builds at all:
 * build-atomic.test.ts.)
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, START_COMMAND, useProcesses, waitFor } from './helpers/process.js';
import { useRedis } from './helpers/redis.js';
import { postGraphQL } from './helpers/stack.js';

const run = promisify(execFile);
const processes = useProcesses();
const redis = useRedis();

const scripts = (JSON.parse(readFileSync(`${PROJECT_ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> })
  .scripts;
const [startCommand, ...startArgs] = START_COMMAND;
/** The node flags `npm start` runs `dist/main.js` with. */
const startFlags = startArgs.slice(0, -1);

/** The files under `dir` (relative to it, `/`-separated), directories left out. */
function filesUnder(dir: string): string[] {
  return readdirSync(`${PROJECT_ROOT}${dir}`, { recursive: true, encoding: 'utf8' })
    .map((file) => file.split('\\').join('/'))
    .filter((file) => statSync(`${PROJECT_ROOT}${dir}/${file}`).isFile())
    .sort();
}

/** The build `dist/main.js` runs, `dist/builds/<id>`, from the one import of that entry. */
function currentBuild(): string {
  const id = /^await import\("\.\/builds\/([\w-]+)\/main\.js"\);$/m.exec(
    readFileSync(`${PROJECT_ROOT}dist/main.js`, 'utf8'),
  )?.[1];
  expect(id).toBeDefined();
  return `dist/builds/${id}`;
}

/** The JavaScript files of the current build, relative to its folder. */
const compiled = () => filesUnder(currentBuild()).filter((file) => file.endsWith('.js'));

/**
 * What a module imports: a relative path, a package or a node: built-in. esbuild (and the entry
 * `dist/main.js`) write each import statement at the start of a line or after the `;` of the one
 * before it (the build is minified, so several share a line, and a long one spans lines), with its
 * specifier in double quotes.
 */
function importsOf(path: string): string[] {
  const code = readFileSync(`${PROJECT_ROOT}${path}`, 'utf8');
  return [
    ...code.matchAll(
      /(?:^|;)\s*(?:import|export)\b[^;]*?\bfrom\s*"([^"]+)"|(?:^|;)\s*import\s*"([^"]+)"|\bimport\("([^"]+)"\)/gm,
    ),
  ].map((match) => match[1] ?? match[2] ?? match[3] ?? '');
}

// One build for the file: both describes run what it wrote.
beforeAll(async () => {
  // What an earlier layout of dist/ left for a module src/ no longer has, and an old build no
  // process runs (neither the current one nor the one before it).
  mkdirSync(`${PROJECT_ROOT}dist/removed`, { recursive: true });
  writeFileSync(`${PROJECT_ROOT}dist/removed/module.js`, 'export {};\n');
  writeFileSync(`${PROJECT_ROOT}dist/renamed.js`, 'export {};\n');
  mkdirSync(`${PROJECT_ROOT}dist/builds/bundle-0000000000000000`, { recursive: true });
  writeFileSync(`${PROJECT_ROOT}dist/builds/bundle-0000000000000000/main.js`, 'export {};\n');

  await run('npm', ['run', '--silent', 'build'], { cwd: PROJECT_ROOT });
}, 60_000);

describe('npm run build', () => {
  it('bundles src/main.ts into a build of its own, main.js and its chunks, each with its source map, and removes what an earlier build left', () => {
    const build = currentBuild();
    const files = filesUnder(build);

    expect(files).toContain('main.js');
    // in-use-by-<pid>: a gateway of this checkout runs this build (see build-atomic.test.ts).
    expect(files.filter((file) => !/^(?:(?:main|chunks\/[\w-]+)\.js(?:\.map)?|in-use-by-\d+)$/.test(file))).toEqual([]);
    for (const file of compiled()) expect(files).toContain(`${file}.map`);
    expect(readdirSync(`${PROJECT_ROOT}dist`).sort()).toEqual(['builds', 'main.js']);
    expect(readdirSync(`${PROJECT_ROOT}dist/builds`)).not.toContain('bundle-0000000000000000');
  });

  it('makes dist/main.js an entry that imports the current build alone, with a shebang for the package bin', () => {
    const entry = readFileSync(`${PROJECT_ROOT}dist/main.js`, 'utf8');
    const bin = (JSON.parse(readFileSync(`${PROJECT_ROOT}package.json`, 'utf8')) as { bin: Record<string, string> })
      .bin;

    expect(entry.split('\n')[0]).toBe('#!/usr/bin/env node');
    expect(importsOf('dist/main.js').filter((specifier) => !specifier.startsWith('node:'))).toEqual([
      `./${currentBuild().slice('dist/'.length)}/main.js`,
    ]);
    expect(Object.values(bin)).toEqual(['dist/main.js']);
  });

  it('leaves no import in the build that needs tsx, a TypeScript loader or a file outside its folder (the modules of src/ are in the bundle)', () => {
    const build = currentBuild();
    const specifiers = compiled().flatMap((file) => importsOf(`${build}/${file}`));

    expect(specifiers).toContain('node:module');
    expect(
      specifiers.filter((specifier) => /\.(?:c|m)?tsx?$/.test(specifier) || /^tsx(?:\/|$)/.test(specifier)),
    ).toEqual([]);
    expect(specifiers.filter((specifier) => specifier.startsWith('../') || /(?:^|\/)src\//.test(specifier))).toEqual(
      [],
    );
  });

  it('bundles one copy of graphql-js, its ES module build, for the modules that import it and those that require it', () => {
    const build = currentBuild();
    const graphqlSources = compiled().flatMap((file) =>
      (JSON.parse(readFileSync(`${PROJECT_ROOT}${build}/${file}.map`, 'utf8')) as SourceMapPayload).sources.filter(
        (source) => /(?:^|\/)node_modules\/graphql\//.test(source),
      ),
    );

    expect(graphqlSources.some((source) => source.endsWith('node_modules/graphql/index.mjs'))).toBe(true);
    expect(graphqlSources.filter((source) => !source.endsWith('.mjs'))).toEqual([]);
  });

  it('maps the compiled code back to src/*.ts lines, which node --enable-source-maps shows in stack traces', () => {
    // Where the bundle holds src/config/parse.ts's message for a bad port, and what its map says that place is.
    const NEEDLE = 'must be an integer from ${min}';
    // The build keeps its lines short, and may break one inside a string (a backslash before the line end).
    const needle = new RegExp(
      [...NEEDLE].map((char) => char.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('(?:\\\\\n)?'),
    );
    const build = currentBuild();
    const [file, line, column] = compiled().flatMap((each) => {
      const code = readFileSync(`${PROJECT_ROOT}${build}/${each}`, 'utf8');
      const at = needle.exec(code)?.index;
      if (at === undefined) return [];
      const before = code.slice(0, at).split('\n');
      return [[each, before.length - 1, (before.at(-1) ?? '').length] as const];
    })[0] ?? ['', 0, 0];
    const map = new SourceMap(
      JSON.parse(readFileSync(`${PROJECT_ROOT}${build}/${file}.map`, 'utf8')) as SourceMapPayload,
    );
    const entry = map.findEntry(line, column) as { originalSource?: string };

    expect(file).not.toBe('');
    expect(entry.originalSource).toMatch(/(?:^|\/)src\/config\/parse\.ts$/);
    const mainMap = JSON.parse(readFileSync(`${PROJECT_ROOT}${build}/main.js.map`, 'utf8')) as SourceMapPayload;
    expect(mainMap.sources.some((source) => /(?:^|\/)src\/main\.ts$/.test(source))).toBe(true);
  });
});

describe('npm start', () => {
  it('builds on prestart (if the sources changed), with plain node, then runs dist/main.js with plain node', () => {
    // The build's own command rather than `npm run build`: one npm start-up less before each start.
    expect(scripts['prestart']).toBe(`${scripts['build']} --quiet`);
    expect(scripts['build']).toMatch(/^node scripts\/build-if-changed\.js\b/);
    expect(startCommand).toBe('node');
    expect(startArgs.at(-1)).toBe('dist/main.js');
    expect(
      startFlags.filter(
        (flag) => !flag.startsWith('--') || /^--(?:import|loader|experimental-loader|require)\b/.test(flag),
      ),
    ).toEqual([]);
  });

  it('runs the compiled gateway on the embedded emulator, answers a query, and exits 0 on SIGTERM', async () => {
    const { child, output, exited } = processes.startGateway();

    const [, url = ''] = await waitFor(output, /GraphQL gateway ready: (http:\/\/\S+\/graphql)/, 20_000);
    expect(output()).toMatch(/Upstreams: embedded emulator/);
    expect(await postGraphQL(url, '{ pet(id: 1) { name } }', {}, { api_key: 'demo' })).toEqual({
      status: 200,
      data: { pet: { name: 'Cat 1' } },
    });
    // The federation subgraph (@apollo/subgraph, a CommonJS module) runs on the same graphql-js.
    expect(
      await postGraphQL(
        url,
        'query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on Pet { name } } }',
        { representations: [{ __typename: 'Pet', id: '1' }] },
        { api_key: 'demo' },
      ),
    ).toEqual({ status: 200, data: { _entities: [{ name: 'Cat 1' }] } });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output()).toMatch(/\nstopped\n/);
  }, 30_000);

  it('loads the Redis client and the Redis rate limiter it bundles on demand: limits and the cache are in Redis', async () => {
    const env = { REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: '2', RESPONSE_CACHE_TTL_MS: '60000' };
    const { output } = processes.startGateway(env);

    const [, url = ''] = await waitFor(output, /GraphQL gateway ready: (http:\/\/\S+\/graphql)/, 20_000);
    await waitFor(output, /Shared state: .*\n/);
    const statuses = [];
    for (let request = 0; request < 3; request += 1)
      statuses.push((await postGraphQL(url, '{ pet(id: 1) { name } }', {}, { api_key: 'demo' })).status);

    expect(output()).toMatch(/^Shared state: Redis redis:\/\/127\.0\.0\.1:\d+ .*, connected$/m);
    expect(statuses).toEqual([200, 200, 429]);
    const keys = await redis.cli('--scan');
    expect(keys).toMatch(/^rest-graphql-gateway:rate-limit:2:client:/m);
    expect(keys).toMatch(/^rest-graphql-gateway:cache:answer:/m);
  }, 30_000);
});
