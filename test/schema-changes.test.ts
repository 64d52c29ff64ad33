/**
 * The gate on the graph's contract (`scripts/check-schema-changes.ts`, `npm run check:schema`):
 * each change between the previous printed SDL and the current one is listed with its class, and
 * a breaking one fails unless CHANGELOG.md names it under "Breaking" in its topmost release.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSchemaChanges, compareSchemas, reportLines } from '../scripts/check-schema-changes.js';
import { PROJECT_ROOT } from './helpers/process.js';

const BEFORE = `
type Query {
  pet(id: ID!): Pet
}

type Pet {
  id: ID!
  name: String!
  status: PetStatus
}

enum PetStatus {
  AVAILABLE
  SOLD
}
`;

const WITHOUT_STATUS = BEFORE.replace('  status: PetStatus\n', '');
const CHANGELOG_NAMING_STATUS = `# Changelog

## Unreleased

### Breaking

- \`Pet.status\` is gone: read \`Pet.availability\` instead.

### Added

- Nothing else.
`;

describe('compareSchemas', () => {
  it('fails on a removed field that the changelog does not name, and says so', async () => {
    const check = await compareSchemas(BEFORE, WITHOUT_STATUS, '# Changelog\n\n## Unreleased\n', 'api.graphql');

    expect(check.outcome).toBe('failed');
    expect(check.changes).toEqual([
      {
        file: 'api.graphql',
        level: 'BREAKING',
        path: 'Pet.status',
        message: "Field 'status' was removed from object type 'Pet'",
        recorded: false,
      },
    ]);
    const report = reportLines(check, 'HEAD~1');
    expect(report[0]).toBe(
      "BREAKING     Pet.status: Field 'status' was removed from object type 'Pet' (api.graphql) " +
        '[NOT named under Breaking in CHANGELOG.md]',
    );
    expect(report[1]).toBe('schema changes since HEAD~1: 1 breaking (1 not in CHANGELOG.md), 0 dangerous, 0 safe');
    expect(report[2]).toContain('(`Pet.status`)');
  });

  it('passes the same removal when the topmost release names it under Breaking', async () => {
    const check = await compareSchemas(BEFORE, WITHOUT_STATUS, CHANGELOG_NAMING_STATUS);

    expect(check.outcome).toBe('passed');
    expect(check.changes).toMatchObject([{ level: 'BREAKING', path: 'Pet.status', recorded: true }]);
    expect(reportLines(check, 'HEAD~1')[0]).toMatch(/\[named under Breaking in CHANGELOG.md\]$/);
  });

  it('passes a removal named by the message it prints instead of its path', async () => {
    const changelog = "## Unreleased\n### Breaking changes\nField 'status' was removed from object type 'Pet'\n";

    expect((await compareSchemas(BEFORE, WITHOUT_STATUS, changelog)).outcome).toBe('passed');
  });

  it.each([
    [
      'under another heading of the topmost release',
      '## Unreleased\n\n### Breaking\n\n- `Pet.name` is longer.\n\n### Removed\n\n- `Pet.status`\n',
    ],
    [
      'under Breaking in an older release',
      '## Unreleased\n\n- Faster.\n\n## 1.0.0\n\n### Breaking\n\n- `Pet.status`\n',
    ],
    ['in the topmost release, without backticks', '## Unreleased\n\n### Breaking\n\n- Pet.status is gone.\n'],
    ['under a Non-breaking heading', '## Unreleased\n\n### Non-breaking\n\n- `Pet.status`\n'],
  ])('still fails a removal the changelog names only %s', async (_where, changelog) => {
    const check = await compareSchemas(BEFORE, WITHOUT_STATUS, changelog);

    expect(check.outcome).toBe('failed');
    expect(check.changes).toMatchObject([{ path: 'Pet.status', recorded: false }]);
  });

  it('passes an added optional argument, classed as @graphql-inspector classes it', async () => {
    const after = BEFORE.replace('pet(id: ID!): Pet', 'pet(id: ID!, locale: String): Pet');

    const check = await compareSchemas(BEFORE, after, '');

    expect(check.outcome).toBe('passed');
    // @graphql-inspector (as graphql-js's findDangerousChanges) classes an argument added to an
    // existing field as dangerous, not safe; it is listed, and passes all the same.
    expect(check.changes).toMatchObject([{ level: 'DANGEROUS', path: 'Query.pet.locale', recorded: false }]);
  });

  it('passes an added field as safe', async () => {
    const check = await compareSchemas(
      BEFORE,
      BEFORE.replace('  name: String!\n', '  name: String!\n  age: Int\n'),
      '',
    );

    expect(check.outcome).toBe('passed');
    expect(check.changes).toMatchObject([{ level: 'NON_BREAKING', path: 'Pet.age' }]);
    expect(reportLines(check, 'HEAD~1')).toEqual([
      "NON_BREAKING Pet.age: Field 'age' was added to object type 'Pet' (schema.graphql)",
      'schema changes since HEAD~1: 0 breaking (0 not in CHANGELOG.md), 0 dangerous, 1 safe',
    ]);
  });

  it('prints an added enum value as dangerous and passes', async () => {
    const check = await compareSchemas(BEFORE, BEFORE.replace('  SOLD\n', '  SOLD\n  RESERVED\n'), '');

    expect(check.outcome).toBe('passed');
    expect(reportLines(check, 'HEAD~1')).toEqual([
      "DANGEROUS    PetStatus.RESERVED: Enum value 'RESERVED' was added to enum 'PetStatus' (schema.graphql)",
      'schema changes since HEAD~1: 0 breaking (0 not in CHANGELOG.md), 1 dangerous, 0 safe',
    ]);
  });

  it('skips, saying so, when there is no previous file', async () => {
    const check = await compareSchemas(undefined, BEFORE, '', 'api.graphql');

    expect(check).toEqual({
      outcome: 'skipped',
      changes: [],
      skipped: ['api.graphql: no previous version to compare with'],
    });
    expect(reportLines(check, 'HEAD~1')).toEqual([
      'skipped api.graphql: no previous version to compare with',
      'schema changes since HEAD~1: skipped, nothing to compare with',
    ]);
  });

  it('reports no change as none', async () => {
    const check = await compareSchemas(BEFORE, BEFORE, '');

    expect(check.outcome).toBe('passed');
    expect(reportLines(check, 'HEAD~1')).toEqual(['schema changes since HEAD~1: none']);
  });

  it('refuses a text that is not SDL, naming the file', async () => {
    await expect(compareSchemas(BEFORE, 'type Query {', '', 'api.graphql')).rejects.toThrow(
      /^api.graphql is not valid SDL: Syntax Error/,
    );
  });
});

describe('the subgraph SDL', () => {
  const SUBGRAPH = `directive @key(fields: String!) repeatable on OBJECT | INTERFACE\n${BEFORE.replace(
    'type Pet {',
    'type Pet @key(fields: "id") {',
  )}`;

  it('fails on a removed entity key, which @graphql-inspector alone would class as dangerous', async () => {
    const check = await compareSchemas(SUBGRAPH, SUBGRAPH.replace(' @key(fields: "id")', ''), '');

    expect(check.outcome).toBe('failed');
    expect(check.changes).toMatchObject([{ level: 'BREAKING', path: 'Pet.@key' }]);
  });

  it('fails on a changed key', async () => {
    const check = await compareSchemas(SUBGRAPH, SUBGRAPH.replace('@key(fields: "id")', '@key(fields: "name")'), '');

    expect(check.outcome).toBe('failed');
    expect(check.changes).toContainEqual(expect.objectContaining({ level: 'BREAKING', path: 'Pet.@key.fields' }));
  });

  it('lists a change once when both printed files show it', async () => {
    const check = await checkSchemaChanges(
      [
        { file: 'api.graphql', previous: BEFORE, current: WITHOUT_STATUS },
        { file: 'subgraph.graphql', previous: SUBGRAPH, current: SUBGRAPH.replace('  status: PetStatus\n', '') },
      ],
      '',
    );

    expect(check.outcome).toBe('failed');
    expect(check.changes).toMatchObject([{ file: 'api.graphql', path: 'Pet.status' }]);
  });
});

describe('npm run check:schema in a git repository', () => {
  const run = promisify(execFile);
  const repos: string[] = [];
  afterAll(() => repos.forEach((repo) => rmSync(repo, { recursive: true, force: true })));
  // The repository's git, not the machine's: no global or system configuration (hooks, signing).
  const env = {
    ...process.env,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
  };

  /** A repository with one commit per entry, each writing the files it names. */
  async function repository(commits: Record<string, string>[]): Promise<string> {
    const repo = mkdtempSync(join(tmpdir(), 'schema-changes-'));
    repos.push(repo);
    await run('git', ['init', '--quiet', repo], { env });
    for (const [index, files] of commits.entries()) {
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(repo, path)), { recursive: true });
        writeFileSync(join(repo, path), text);
      }
      await run('git', ['add', '--all'], { cwd: repo, env });
      await run('git', ['commit', '--quiet', '-m', `commit ${index + 1}`], { cwd: repo, env });
    }
    return repo;
  }

  /** The real script, run from the repository: its exit code and what it printed. */
  async function checkSchema(repo: string): Promise<{ code: number; stdout: string }> {
    const tsx = join(PROJECT_ROOT, 'node_modules/.bin/tsx');
    const script = join(PROJECT_ROOT, 'scripts/check-schema-changes.ts');
    try {
      const { stdout } = await run(tsx, [script], { cwd: repo, env, encoding: 'utf8' });
      return { code: 0, stdout };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string };
      return { code: failed.code ?? -1, stdout: failed.stdout ?? '' };
    }
  }

  it('exits 1 on a commit that removes a field without naming it, and 0 once the commit names it', async () => {
    const repo = await repository([
      { 'schema/printed/api.graphql': BEFORE, 'CHANGELOG.md': '# Changelog\n\n## Unreleased\n' },
      { 'schema/printed/api.graphql': WITHOUT_STATUS },
    ]);

    const unnamed = await checkSchema(repo);

    expect(unnamed.code).toBe(1);
    expect(unnamed.stdout).toContain("BREAKING     Pet.status: Field 'status' was removed from object type 'Pet'");
    expect(unnamed.stdout).toContain('schema changes since HEAD~1: 1 breaking (1 not in CHANGELOG.md)');

    writeFileSync(join(repo, 'CHANGELOG.md'), CHANGELOG_NAMING_STATUS);
    await run('git', ['commit', '--quiet', '--all', '--amend', '--no-edit'], { cwd: repo, env });
    const named = await checkSchema(repo);

    expect(named).toEqual({
      code: 0,
      stdout:
        "BREAKING     Pet.status: Field 'status' was removed from object type 'Pet' (api.graphql) " +
        '[named under Breaking in CHANGELOG.md]\n' +
        'schema changes since HEAD~1: 1 breaking (0 not in CHANGELOG.md), 0 dangerous, 0 safe\n',
    });
  });

  it('exits 0, saying why, when there is no previous commit (a first commit or a shallow clone)', async () => {
    const repo = await repository([{ 'schema/printed/api.graphql': BEFORE }]);

    expect(await checkSchema(repo)).toEqual({
      code: 0,
      stdout:
        'schema changes since HEAD~1: skipped, there is no commit HEAD~1 to compare with ' +
        '(the first commit, or a shallow clone: git fetch --deepen=1 adds it)\n',
    });
  });

  it('exits 0, saying why, when the previous commit has no printed SDL', async () => {
    const repo = await repository([{ 'CHANGELOG.md': '# Changelog\n' }, { 'schema/printed/api.graphql': BEFORE }]);

    expect(await checkSchema(repo)).toEqual({
      code: 0,
      stdout:
        'skipped api.graphql: no previous version to compare with\n' +
        'schema changes since HEAD~1: skipped, nothing to compare with\n',
    });
  });
});
