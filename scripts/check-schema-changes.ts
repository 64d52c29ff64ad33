/**
 * CI's gate on the graph's contract: compares the printed SDL in `schema/printed/` with the
 * previous commit's, classes each change with @graphql-inspector/core (breaking, dangerous, safe)
 * and fails on a breaking change that CHANGELOG.md does not name under "Breaking".
 *
 * `npm run check:schema` compares the working tree's files with `HEAD~1`'s; in CI, a fresh clone,
 * the working tree is HEAD. `npm run check:schema -- --base <commit>` compares with another commit
 * (`--base HEAD`: only what is not committed yet). It is skipped, saying so, when the base commit
 * does not exist (the first commit, or a shallow clone) or has no printed SDL yet.
 *
 * The changelog convention: in the topmost release's section of CHANGELOG.md (from its first `## `
 * heading, normally `## Unreleased`, to the next), a heading that contains "Breaking" (`### Breaking`)
 * starts a part that must name each breaking change, by its path in backticks (`` `Pet.status` ``,
 * `` `Query.pet.id` ``, `` `PetStatus.SOLD` ``, `` `Pet.@key` ``) or by the message printed here.
 * A named change passes; the part runs to the next heading of its level or above.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ChangeType, CriticalityLevel, diff, type Change, type Rule } from '@graphql-inspector/core';
import { buildSchema, type GraphQLSchema } from 'graphql';

/** The folder of the printed SDL, relative to the project. */
export const PRINTED_SCHEMA_FOLDER = 'schema/printed';

/** The command that rewrites the folder, for the messages that ask for it. */
export const PRINTED_SCHEMA_COMMAND = 'npm run schema:printed';

/** @graphql-inspector's classes: `BREAKING`, `DANGEROUS` or `NON_BREAKING` (safe). */
export type ChangeClass = `${CriticalityLevel}`;

/** One change between two printed schemas. */
export type SchemaChange = {
  /** the printed file it was found in (`api.graphql`) */
  file: string;
  level: ChangeClass;
  /** the schema coordinate it touches (`Pet.status`), when it has one */
  path: string | undefined;
  /** @graphql-inspector's sentence (`Field 'status' was removed from object type 'Pet'`) */
  message: string;
  /** whether the changelog's Breaking part names it (what lets a breaking change pass) */
  recorded: boolean;
};

/** The outcome of a comparison. */
export type SchemaCheck = {
  /** `failed` when a breaking change is not recorded; `skipped` when there was nothing to compare with */
  outcome: 'skipped' | 'passed' | 'failed';
  changes: SchemaChange[];
  /** why a file (or the whole check) was not compared */
  skipped: string[];
};

/** The changes a previous file and a current one hand the check. */
export type PrintedPair = { file: string; previous: string | undefined; current: string };

/**
 * A subgraph's `@key` is a contract with the routers and the other subgraphs: they fetch the entity
 * by it, so a removed key (or its `fields` changed, which @graphql-inspector reports as the argument
 * removed then added) breaks their query plans. @graphql-inspector classes a removed directive use
 * as dangerous only, because it cannot know what a directive means.
 */
const federationKeysBreak: Rule = ({ changes }) =>
  changes.map((change) =>
    removesKey(change)
      ? {
          ...change,
          criticality: {
            level: CriticalityLevel.Breaking,
            reason: 'Routers and other subgraphs resolve the entity by its @key; removing or changing it breaks them.',
          },
        }
      : change,
  );

function removesKey(change: Change): boolean {
  const meta: unknown = change.meta;
  if (typeof meta !== 'object' || meta === null) return false;
  if (
    change.type === ChangeType.DirectiveUsageObjectRemoved ||
    change.type === ChangeType.DirectiveUsageInterfaceRemoved
  ) {
    return Reflect.get(meta, 'removedDirectiveName') === 'key';
  }
  return change.type === ChangeType.DirectiveUsageArgumentRemoved && Reflect.get(meta, 'directiveName') === 'key';
}

function headingLevel(line: string): number | undefined {
  return /^(#{1,6})\s/.exec(line)?.[1]?.length;
}

/** The index of the first line from `from` that is a heading of `level` or above, or the end. */
function sectionEnd(lines: string[], from: number, level: number): number {
  const end = lines.findIndex((line, index) => index >= from && (headingLevel(line) ?? 7) <= level);
  return end < 0 ? lines.length : end;
}

/**
 * The changelog's Breaking part: under the topmost release (the first `## ` heading's section, or
 * the whole file when it has none), from a heading that contains "Breaking" to the next heading of
 * its level or above. Empty when there is none.
 */
export function breakingPart(changelog: string): string {
  const lines = changelog.split(/\r?\n/);
  const release = lines.findIndex((line) => headingLevel(line) === 2);
  const [from, to] = release < 0 ? [0, lines.length] : [release + 1, sectionEnd(lines, release + 1, 2)];
  // "Breaking", "Breaking changes", "⚠ Breaking"; not "Non-breaking".
  const heading = lines.findIndex(
    (line, index) => index >= from && index < to && /^#{2,6}\s.*(?<!non[- ]?)\bbreaking\b/i.test(line),
  );
  if (heading < 0) return '';
  const end = Math.min(to, sectionEnd(lines, heading + 1, headingLevel(lines[heading] ?? '') ?? 6));
  return lines.slice(heading + 1, end).join('\n');
}

function parseSdl(sdl: string, name: string): GraphQLSchema {
  try {
    return buildSchema(sdl);
  } catch (error) {
    throw new Error(`${name} is not valid SDL: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Compares two printed schemas. `previous` is undefined when the previous commit has no such file:
 * the comparison is then skipped. A breaking change fails it unless `changelog`'s Breaking part
 * names it; dangerous and safe changes are listed and pass.
 * @throws Error when either text is not valid SDL
 */
export async function compareSchemas(
  previous: string | undefined,
  current: string,
  changelog: string,
  file = 'schema.graphql',
): Promise<SchemaCheck> {
  if (previous === undefined) {
    return { outcome: 'skipped', changes: [], skipped: [`${file}: no previous version to compare with`] };
  }
  const found = await diff(parseSdl(previous, `the previous ${file}`), parseSdl(current, file), [federationKeysBreak]);
  const breaking = breakingPart(changelog);
  const changes = found.map((change): SchemaChange => ({
    file,
    level: change.criticality.level,
    path: change.path,
    message: change.message,
    recorded:
      (change.path !== undefined && breaking.includes(`\`${change.path}\``)) || breaking.includes(change.message),
  }));
  const failed = changes.some((change) => change.level === 'BREAKING' && !change.recorded);
  return { outcome: failed ? 'failed' : 'passed', changes, skipped: [] };
}

/**
 * Compares each printed file with its previous version. A change found in an earlier file is not
 * listed again for a later one (`subgraph.graphql` repeats every type of `api.graphql`; what it adds
 * is the federation directives).
 */
export async function checkSchemaChanges(pairs: PrintedPair[], changelog: string): Promise<SchemaCheck> {
  const checks = [];
  for (const { file, previous, current } of pairs)
    checks.push(await compareSchemas(previous, current, changelog, file));
  const seen = new Set<string>();
  const changes = checks
    .flatMap((check) => check.changes)
    .filter((change) => {
      const key = `${change.path ?? ''}\n${change.message}`;
      return !seen.has(key) && Boolean(seen.add(key));
    });
  const skipped = checks.flatMap((check) => check.skipped);
  const outcomes = checks.map((check) => check.outcome);
  const outcome = outcomes.includes('failed') ? 'failed' : outcomes.includes('passed') ? 'passed' : 'skipped';
  return { outcome, changes, skipped };
}

/** What the script prints: each change with its class, then one line with the outcome. */
export function reportLines(check: SchemaCheck, base: string): string[] {
  const lines = check.skipped.map((reason) => `skipped ${reason}`);
  for (const change of check.changes) {
    const recorded =
      change.level !== 'BREAKING'
        ? ''
        : change.recorded
          ? ' [named under Breaking in CHANGELOG.md]'
          : ' [NOT named under Breaking in CHANGELOG.md]';
    lines.push(
      `${change.level.padEnd(12)} ${change.path ?? '(schema)'}: ${change.message} (${change.file})${recorded}`,
    );
  }
  const count = (level: ChangeClass) => check.changes.filter((change) => change.level === level).length;
  const unrecorded = check.changes.filter((change) => change.level === 'BREAKING' && !change.recorded);
  const counts =
    `${count('BREAKING')} breaking (${unrecorded.length} not in CHANGELOG.md), ` +
    `${count('DANGEROUS')} dangerous, ${count('NON_BREAKING')} safe`;
  if (check.outcome === 'skipped') lines.push(`schema changes since ${base}: skipped, nothing to compare with`);
  else lines.push(`schema changes since ${base}: ${check.changes.length === 0 ? 'none' : counts}`);
  if (check.outcome === 'failed') {
    lines.push(
      'A breaking change fails this check until CHANGELOG.md records it: under the topmost release ' +
        '(## Unreleased), a heading containing "Breaking" (### Breaking) with an entry that names each ' +
        `change by its path in backticks (${unrecorded.map((change) => `\`${change.path ?? change.message}\``).join(', ')}) ` +
        'and says what callers must do.',
    );
  }
  return lines;
}

/** A git command's output, or undefined when it fails (no such commit, no such file, no repository). */
function git(args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 });
  } catch {
    return undefined;
  }
}

/** The check on the repository of the working directory; resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const at = argv.indexOf('--base');
  const base = at < 0 ? 'HEAD~1' : (argv[at + 1] ?? 'HEAD~1');
  if (git(['rev-parse', '--verify', '--quiet', `${base}^{commit}`]) === undefined) {
    console.log(
      `schema changes since ${base}: skipped, there is no commit ${base} to compare with ` +
        '(the first commit, or a shallow clone: git fetch --deepen=1 adds it)',
    );
    return 0;
  }
  const files = existsSync(PRINTED_SCHEMA_FOLDER)
    ? readdirSync(PRINTED_SCHEMA_FOLDER)
        .filter((name) => name.endsWith('.graphql'))
        .sort()
    : [];
  if (files.length === 0) {
    console.log(`${PRINTED_SCHEMA_FOLDER} has no printed SDL: run ${PRINTED_SCHEMA_COMMAND} and commit it`);
    return 1;
  }
  const pairs = files.map((file) => ({
    file,
    previous: git(['show', `${base}:${PRINTED_SCHEMA_FOLDER}/${file}`]),
    current: readFileSync(`${PRINTED_SCHEMA_FOLDER}/${file}`, 'utf8'),
  }));
  const check = await checkSchemaChanges(pairs, existsSync('CHANGELOG.md') ? readFileSync('CHANGELOG.md', 'utf8') : '');
  for (const line of reportLines(check, base)) console.log(line);
  return check.outcome === 'failed' ? 1 : 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      console.error(`check:schema: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    },
  );
}
