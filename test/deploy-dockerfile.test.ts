/**
 * The container image, checked without a Docker engine: the Dockerfile is read as Docker reads
 * it (stages, instructions, continuation lines) and held against the repository. A build stage
 * compiles src/ with the dev dependencies; the runtime stage holds the production dependencies,
 * dist/ and schema/ only, runs `node dist/main.js` as an unprivileged user, and has every file
 * the gateway reads at run time.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHIPPED_NODE_LINE } from '../src/runtime.js';
import { PROJECT_ROOT } from './helpers/process.js';

type Instruction = { keyword: string; args: string };
type Stage = { name: string; image: string; workdir: string; instructions: Instruction[] };
type Copy = { from: string | undefined; sources: string[]; destination: string };

/** The stages of a Dockerfile, each with its instructions (comments dropped, continuations joined). */
function parseDockerfile(text: string): Stage[] {
  const lines: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    // Docker drops comment lines, inside a continued instruction too.
    if (line.startsWith('#') || (line === '' && pending === '')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    lines.push(`${pending}${line}`);
    pending = '';
  }
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args };
    if (instruction.keyword === 'FROM') {
      const [, name = String(stages.length)] = /\sAS\s+(\S+)$/i.exec(args) ?? [];
      const image = args.split(/\s+/).find((word) => !word.startsWith('--')) ?? '';
      stages.push({ name, image, workdir: '/', instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`"${line}" comes before any FROM`);
    if (instruction.keyword === 'WORKDIR') stage.workdir = posix.resolve(stage.workdir, args);
    stage.instructions.push(instruction);
  }
  return stages;
}

/** The COPY instructions of a stage, sources and destination relative to that stage's WORKDIR. */
function copies(stage: Stage, stages: Stage[]): Copy[] {
  return stage.instructions
    .filter((instruction) => instruction.keyword === 'COPY')
    .map((instruction) => {
      const words = instruction.args.split(/\s+/);
      const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((word) => !word.startsWith('--'));
      // A source in another stage is an absolute path there; read it relative to that stage's WORKDIR.
      const sourceWorkdir = from === undefined ? '/' : (stages.find((other) => other.name === from)?.workdir ?? '/');
      return {
        from,
        sources: paths
          .slice(0, -1)
          .map((path) => posix.relative(sourceWorkdir, posix.resolve(sourceWorkdir, path)) || '.'),
        destination: posix.relative(stage.workdir, posix.resolve(stage.workdir, paths.at(-1) ?? '')) || '.',
      };
    });
}

/** Whether `.dockerignore` keeps `path` (relative to the project) out of the build context. */
function ignoredByDocker(path: string, patterns: string[]): boolean {
  const matchers = patterns.map(
    (pattern) =>
      new RegExp(
        `^${pattern
          .replace(/^\.?\//, '')
          .replace(/\/$/, '')
          .replace(/[.+^${}()|[\]\\]/g, '\\$&')
          .replace(/\*\*/g, '\0')
          .replace(/\*/g, '[^/]*')
          .replace(/\?/g, '[^/]')
          .replace(/\0/g, '.*')}$`,
      ),
  );
  const segments = path.split('/');
  // A pattern that matches a directory leaves out everything in it.
  return segments.some((_, index) => matchers.some((matcher) => matcher.test(segments.slice(0, index + 1).join('/'))));
}

const stages = parseDockerfile(readFileSync(`${PROJECT_ROOT}Dockerfile`, 'utf8'));
const runtime = stages.at(-1) as Stage;
const runtimeCopies = copies(runtime, stages);
const dockerignore = readFileSync(`${PROJECT_ROOT}.dockerignore`, 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));
const packageJson = JSON.parse(readFileSync(`${PROJECT_ROOT}package.json`, 'utf8')) as {
  type?: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync(`${PROJECT_ROOT}package-lock.json`, 'utf8')) as {
  packages: Record<string, { dev?: boolean }>;
};

const runs = (stage: Stage) =>
  stage.instructions.filter((instruction) => instruction.keyword === 'RUN').map((instruction) => instruction.args);
/** The stage that writes dist/: the one that runs `npm run build`. */
const buildStage = stages.find((stage) => runs(stage).some((command) => /\bnpm run build\b/.test(command)));
/** The runtime's `node` command, from its exec-form CMD. */
const cmd = JSON.parse(
  runtime.instructions.findLast((instruction) => instruction.keyword === 'CMD')?.args ?? 'null',
) as string[] | null;

/** Every file of the project that src/ reads at run time (`projectFile('…')`), as its path from the project root. */
function filesReadAtRunTime(): { module: string; path: string }[] {
  return readdirSync(`${PROJECT_ROOT}src`, { recursive: true, encoding: 'utf8' })
    .map((file) => file.split('\\').join('/'))
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) =>
      [...readFileSync(`${PROJECT_ROOT}src/${file}`, 'utf8').matchAll(/projectFile\(\s*[`']([^`'$]+)/g)].map(
        (match) => ({
          module: `src/${file}`,
          // Found from the project root (the folder with package.json), wherever the bundle puts the code.
          path: match[1] ?? '',
        }),
      ),
    );
}

describe('Dockerfile', () => {
  it('builds and runs on the official Node.js image of the shipped line, Debian slim, in every stage', () => {
    // The official image (Docker Hub's library/node), by a tag that follows the line's releases.
    const [, line, debian] = /^node:(\d+)-(\w+)-slim$/.exec(runtime.image) ?? [];

    expect(Number(line)).toBe(SHIPPED_NODE_LINE);
    // Debian's stable release (13, trixie) in 2026; 12 (bookworm) has only its LTS team's fixes.
    expect(debian).toBe('trixie');
    // dist/ is built and node_modules installed by the same Node.js and npm that run them.
    expect(new Set(stages.map((stage) => stage.image))).toEqual(new Set([runtime.image]));
  });

  it('has a build stage that installs the dev dependencies and runs npm run build on src/', () => {
    expect(buildStage).toBeDefined();
    const stage = buildStage as Stage;
    expect(runs(stage).filter((command) => /\bnpm ci\b/.test(command) && !command.includes('--omit=dev'))).toHaveLength(
      1,
    );
    expect(copies(stage, stages).flatMap((copy) => (copy.from === undefined ? copy.sources : []))).toEqual(
      expect.arrayContaining(['package.json', 'package-lock.json', 'scripts', 'src']),
    );
    expect(packageJson.scripts['build']).toMatch(/scripts\/build\.ts/);
  });

  it('runs node dist/main.js in the runtime stage, as npm start does, with no TypeScript loader', () => {
    expect(cmd?.[0]).toBe('node');
    expect(cmd?.at(-1)).toBe('dist/main.js');
    expect(cmd?.join(' ')).toBe(packageJson.scripts['start']);
    expect(cmd?.filter((word) => /tsx|^--(?:import|loader|experimental-loader|require)\b/.test(word))).toEqual([]);
  });

  it('copies no TypeScript sources into the runtime stage', () => {
    const sources = runtimeCopies.flatMap((copy) => copy.sources);

    expect(
      sources.filter(
        (source) => source === '.' || source === 'src' || source.startsWith('src/') || source.endsWith('.ts'),
      ),
    ).toEqual([]);
  });

  it('gives the runtime stage production dependencies only: installed with --omit=dev, without tsx, typescript or esbuild', () => {
    const modules = runtimeCopies.filter(
      (copy) => copy.destination === 'node_modules' || copy.sources.includes('node_modules'),
    );
    expect(modules).toHaveLength(1);
    const installer = stages.find((stage) => stage.name === modules[0]?.from);
    expect(installer && runs(installer).filter((command) => /\bnpm ci\b/.test(command))).toEqual([
      expect.stringContaining('--omit=dev'),
    ]);
    expect(runs(runtime).filter((command) => /\bnpm (?:ci|install|i)\b/.test(command))).toEqual([]);
    // --omit=dev leaves out exactly what the lock file marks "dev".
    for (const tool of ['tsx', 'typescript', 'esbuild']) {
      expect(packageJson.dependencies).not.toHaveProperty(tool);
      expect(lock.packages[`node_modules/${tool}`]?.dev, tool).toBe(true);
    }
  });

  it('runs the runtime stage as an unprivileged user', () => {
    const user = runtime.instructions.findLast((instruction) => instruction.keyword === 'USER')?.args;

    expect(user).toBeDefined();
    expect(user?.split(':')[0]).not.toMatch(/^(?:root|0)$/);
  });

  it('puts every file the gateway reads at run time into the runtime stage', () => {
    const copied = (path: string) =>
      runtimeCopies.find((copy) => path === copy.destination || path.startsWith(`${copy.destination}/`));
    // dist/main.js comes from the build stage's dist/, which npm run build writes from src/main.ts.
    expect(copied('dist/main.js')).toEqual({ from: buildStage?.name, sources: ['dist'], destination: 'dist' });
    expect(buildStage?.workdir).toBe(runtime.workdir);
    expect(existsSync(`${PROJECT_ROOT}src/main.ts`)).toBe(true);
    // package.json's "type": "module" makes node load dist/*.js as ES modules.
    expect(packageJson.type).toBe('module');
    expect(copied('package.json')?.from).toBeUndefined();
    // The SDL and the OpenAPI documents, found from the project root (src/project-files.ts).
    const read = filesReadAtRunTime();
    expect(read.map((file) => file.module)).toEqual(
      expect.arrayContaining(['src/schema.ts', 'src/emulator/contract.ts']),
    );
    for (const { module, path } of read) {
      const copy = copied(path);
      expect(copy, `${path} (read by ${module})`).toMatchObject({ from: undefined, sources: [expect.any(String)] });
      // The same file in the build context: the copy's source, plus the rest of the path.
      expect(
        existsSync(`${PROJECT_ROOT}${copy?.sources[0]}${path.slice(copy?.destination.length)}`),
        `${path} (read by ${module})`,
      ).toBe(true);
    }
  });

  it('copies only what the build context has: .dockerignore keeps the host dist/ and node_modules/ out, and lets in what stages copy', () => {
    expect(ignoredByDocker('dist/main.js', dockerignore)).toBe(true);
    expect(ignoredByDocker('node_modules/tsx/package.json', dockerignore)).toBe(true);
    for (const stage of stages) {
      for (const source of copies(stage, stages).flatMap((copy) => (copy.from === undefined ? copy.sources : []))) {
        expect(existsSync(`${PROJECT_ROOT}${source}`), source).toBe(true);
        expect(ignoredByDocker(source, dockerignore), source).toBe(false);
      }
    }
  });
});
