/**
 * `npm run check:upstream -- <url-or-file> [--area petstore|plants] [--json]`: reads an upstream's
 * OpenAPI document (a live server's `/api/v3/openapi.json`, or a file) and reports how it
 * differs from the document the gateway is built on, classed for this gateway. Exit code 0: no
 * breaking change; 1: a breaking change; 2: a usage or input error. The only address it fetches
 * is the one it is given.
 */
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { createSchema } from '../schema.js';
import { projectFile } from '../project-files.js';
import { CLASSES, type Change } from './changes.js';
import type { Area } from './graphql-impact.js';
import { checkDocument, diffDocuments, DocumentError } from './openapi-diff.js';
import { isRecord } from './openapi.js';
import { PLANTS_OPERATIONS } from '../upstream/operations.js';

/** Where the command writes. */
export type Output = { stdout(text: string): void; stderr(text: string): void };

const USAGE =
  'usage: npm run check:upstream -- <url-or-file> [--area petstore|plants] [--json]\n' +
  "  <url-or-file>  the upstream's OpenAPI document (YAML or JSON): a file, or an http(s) URL such as\n" +
  '                 https://petstore3.swagger.io/api/v3/openapi.json\n' +
  "  --area         which of the gateway's documents to compare it with (default: plants when the\n" +
  '                 document has a /plants path, else petstore)\n' +
  '  --json         print the differences as a JSON array instead of lines\n' +
  'exit code: 0 no breaking change, 1 a breaking change, 2 a usage or input error';

/** How long a fetched document may take, in milliseconds. */
const FETCH_TIMEOUT_MS = 15_000;

class UsageError extends Error {}

type Arguments = { source: string; area?: Area; json: boolean };

function readArguments(argv: readonly string[]): Arguments | 'help' {
  let source: string | undefined;
  let area: Area | undefined;
  let json = false;
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index] ?? '';
    if (argument === '--help' || argument === '-h') return 'help';
    if (argument === '--json') json = true;
    else if (argument === '--area' || argument.startsWith('--area=')) {
      const value = argument === '--area' ? argv[(index += 1)] : argument.slice('--area='.length);
      if (value !== 'petstore' && value !== 'plants')
        throw new UsageError(`--area must be petstore or plants, got ${JSON.stringify(value ?? '')}`);
      area = value;
    } else if (argument.startsWith('-')) throw new UsageError(`unknown option ${argument}`);
    else if (source !== undefined) throw new UsageError(`one document at a time: got ${source} and ${argument}`);
    else source = argument;
  }
  if (source === undefined) throw new UsageError('which document? Give a file or a URL');
  return { source, ...(area === undefined ? {} : { area }), json };
}

/** The text of the document at `source`: fetched for an http(s) URL, read otherwise. */
async function readSource(source: string): Promise<string> {
  if (/^https?:\/\//i.test(source)) {
    let response: Response;
    try {
      response = await fetch(source, {
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        headers: { accept: 'application/json, application/yaml;q=0.9, */*;q=0.1' },
      });
    } catch (error) {
      // fetch's own message is only "fetch failed": the reason (refused, unknown host) is its cause.
      const reason =
        error instanceof Error ? (error.cause instanceof Error ? error.cause : error).message : String(error);
      throw new DocumentError(`cannot fetch ${source}: ${reason}`);
    }
    if (!response.ok) throw new DocumentError(`cannot fetch ${source}: it answered ${response.status}`);
    return response.text();
  }
  try {
    return await readFile(source, 'utf8');
  } catch (error) {
    const code = isRecord(error) && typeof error['code'] === 'string' ? ` (${error['code']})` : '';
    throw new DocumentError(`cannot read ${source}${code}`);
  }
}

function parseDocument(text: string, source: string): unknown {
  try {
    // YAML 1.2 reads JSON too.
    return parse(text, { maxAliasCount: 1000 });
  } catch (error) {
    throw new DocumentError(
      `${source} is neither JSON nor YAML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
    );
  }
}

/** The plant area when the document has one of the plant area's paths, else the pet store. */
function areaOf(root: Record<string, unknown>): Area {
  const paths = isRecord(root['paths']) ? Object.keys(root['paths']) : [];
  const plants = new Set<string>(Object.values(PLANTS_OPERATIONS).map((row) => row.path));
  return paths.some((path) => plants.has(path)) ? 'plants' : 'petstore';
}

/** The differences as lines, grouped by class, with a summary last. */
function humanReport(changes: readonly Change[], area: Area, source: string): string {
  const lines = [`${source} compared with schema/${area}.openapi.yaml`];
  for (const changeClass of CLASSES) {
    const group = changes.filter((change) => change.class === changeClass);
    if (group.length === 0) continue;
    lines.push('', `${changeClass} (${group.length}):`, ...group.map((change) => `  ${change.message}`));
  }
  const count = (changeClass: Change['class']) => changes.filter((change) => change.class === changeClass).length;
  const verdict =
    count('breaking') > 0
      ? 'the gateway would break against this upstream'
      : count('dangerous') > 0
        ? 'no breaking change; check the dangerous ones'
        : 'no breaking change';
  lines.push('', `${count('breaking')} breaking, ${count('dangerous')} dangerous, ${count('safe')} safe: ${verdict}`);
  return `${lines.join('\n')}\n`;
}

/** Runs the command with `argv` (the arguments after the script's name); resolves to its exit code. */
export async function checkUpstream(argv: readonly string[], output: Output): Promise<number> {
  try {
    const args = readArguments(argv);
    if (args === 'help') {
      output.stdout(`${USAGE}\n`);
      return 0;
    }
    const upstream = checkDocument(parseDocument(await readSource(args.source), args.source), args.source);
    const area = args.area ?? areaOf(upstream);
    const basePath = projectFile(`schema/${area}.openapi.yaml`);
    const base = checkDocument(parse(await readFile(basePath, 'utf8')), `schema/${area}.openapi.yaml`);
    const changes = diffDocuments({ area, base, upstream, schema: createSchema() });
    output.stdout(args.json ? `${JSON.stringify(changes, null, 2)}\n` : humanReport(changes, area, args.source));
    return changes.some((change) => change.class === 'breaking') ? 1 : 0;
  } catch (error) {
    if (error instanceof UsageError) {
      output.stderr(`check:upstream: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof DocumentError) {
      output.stderr(`check:upstream: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
