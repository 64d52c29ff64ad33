/**
 * The example app (examples/app/) is typed against the graph: a document asking a field the
 * graph lacks fails its build (`npm run codegen`, then `tsc`, as `.ci/run` runs them), and so
 * does code reading a field its document did not ask. Each document is written only here, into
 * a copy of the app beside a link to the gateway's schema/, never into the example itself. The
 * codes the app explains to its users are codes the gateway sends.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorCodeUnion } from './helpers/error-codes.js';
import { PROJECT_ROOT } from './helpers/process.js';

const EXAMPLE = `${PROJECT_ROOT}examples/app/`;

/** A copy of the app in a new folder, laid out as in the project: `<tmp>/examples/app` and `<tmp>/schema`. */
function copyOfTheApp(): string {
  const root = mkdtempSync(join(tmpdir(), 'example-app-'));
  const app = join(root, 'examples', 'app');
  mkdirSync(app, { recursive: true });
  symlinkSync(`${PROJECT_ROOT}schema`, join(root, 'schema'));
  symlinkSync(`${EXAMPLE}node_modules`, join(app, 'node_modules'));
  for (const file of ['package.json', 'codegen.ts', 'tsconfig.json', 'src'])
    cpSync(`${EXAMPLE}${file}`, join(app, file), { recursive: true });
  rmSync(join(app, 'src', 'gql'), { recursive: true, force: true });
  return app;
}

/** The test runner's environment without what it adds: NODE_ENV=test silences the code generator's errors. */
const { NODE_ENV: _test, NODE_OPTIONS: _loader, ...ENV } = process.env;

/** `npm run <script>` in `app`: its exit code and everything it printed. */
function run(app: string, script: string): { code: number | null; output: string } {
  const ran = spawnSync('npm', ['run', '--silent', script], { cwd: app, encoding: 'utf8', env: ENV });
  return { code: ran.status, output: `${ran.stdout}${ran.stderr}` };
}

/** Runs `check` with `src/views/<name>.ts` added to the app, and removes it after. */
function withView(app: string, name: string, code: string, check: () => void): void {
  const file = join(app, 'src', 'views', `${name}.ts`);
  writeFileSync(file, code);
  try {
    check();
  } finally {
    rmSync(file);
  }
}

describe('the example app is typed against the graph', () => {
  let app: string;
  beforeAll(() => {
    // .ci/run installs the app's dependencies before the tests; a developer's first run does it here.
    if (!existsSync(`${EXAMPLE}node_modules/.package-lock.json`))
      execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: EXAMPLE, stdio: 'ignore' });
    app = copyOfTheApp();
    // The app's own documents are all in the graph: a failure below is the document each test adds.
    expect(run(app, 'codegen')).toMatchObject({ code: 0 });
  }, 300_000);

  it('fails to build with a document asking a field the graph does not have', () => {
    const view =
      "import { graphql } from '../gql';\n\n" +
      'export const PetNickname = graphql(`\n  query PetNickname($id: ID!) {\n    pet(id: $id) {\n      nickname\n    }\n  }\n`);\n';

    withView(app, 'nickname', view, () => {
      const codegen = run(app, 'codegen');
      const tsc = run(app, 'typecheck');

      expect(codegen.code).not.toBe(0);
      expect(codegen.output).toContain('Cannot query field "nickname" on type "Pet"');
      // Over the types generated before: no typed document has that text.
      expect(tsc.code).not.toBe(0);
      expect(tsc.output).toMatch(/src\/views\/nickname\.ts\(\d+,\d+\): error TS2769: No overload matches this call/);
      expect(tsc.output).toContain('nickname');
    });
  }, 120_000);

  it('fails to type check code that reads a field its document did not ask', () => {
    const view =
      "import { request } from '../client';\nimport { graphql } from '../gql';\n\n" +
      'const PetName = graphql(`\n  query PetName($id: ID!) {\n    pet(id: $id) {\n      name\n    }\n  }\n`);\n\n' +
      'export const nickname = async () =>\n' +
      "  (await request(PetName, { id: '1' }, { apiKey: '', token: '' })).data?.pet?.nickname;\n";

    withView(app, 'pet-name', view, () => {
      expect(run(app, 'codegen').code).toBe(0);
      const tsc = run(app, 'typecheck');

      expect(tsc.code).not.toBe(0);
      expect(tsc.output).toMatch(
        /src\/views\/pet-name\.ts\(\d+,\d+\): error TS2339: Property 'nickname' does not exist/,
      );
    });
  }, 120_000);
});

describe("the example app's error sentences", () => {
  it('are for codes the gateway sends (and the one the app adds, NETWORK), the upstream failures among them', () => {
    const source = readFileSync(`${EXAMPLE}src/errors.ts`, 'utf8');
    const table = source.slice(
      source.indexOf('const SENTENCES'),
      source.indexOf('};', source.indexOf('const SENTENCES')),
    );
    const codes = [...table.matchAll(/^ {2}([A-Z_]+): '/gm)].map((match) => match[1] ?? '');

    expect(codes.filter((code) => code !== 'NETWORK').filter((code) => !errorCodeUnion().includes(code))).toEqual([]);
    expect(codes).toEqual(expect.arrayContaining(['UNAUTHENTICATED', 'NOT_FOUND', 'UPSTREAM_UNAVAILABLE', 'NETWORK']));
  });
});
