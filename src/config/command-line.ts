/**
 * The command line: each setting's flag (derived from its variable), `--help`, `--print-schema`,
 * and "did you mean" suggestions for a misspelt flag (also used for misspelt type names).
 */
import { parseArgs } from 'node:util';
import { ConfigError, type Setting } from './parse.js';
import { SETTINGS } from './settings.js';

/** `PETSTORE_URL` → `--petstore-url`. */
export function flagName(env: string): string {
  return `--${env.toLowerCase().replace(/_/g, '-')}`;
}

/**
 * The flags given for these settings, by flag name without its dashes (`petstore-url`).
 * @throws ConfigError on an unknown flag (naming the setting meant) or a flag without its value
 */
export function readFlags(
  settings: readonly Setting[],
  argv: readonly string[],
): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({
      args: [...argv],
      options: Object.fromEntries(
        settings.map((setting) => [flagName(setting.env).slice(2), { type: 'string' as const }]),
      ),
      strict: true,
    }).values;
  } catch (error) {
    throw new ConfigError(commandLineError(error, settings));
  }
}

/** What is wrong with the command line, with the setting meant when a flag is misspelt. */
function commandLineError(error: unknown, settings: readonly Setting[]): string {
  const message = error instanceof Error ? error.message : 'unreadable command line';
  const unknown = /^Unknown option '(--?[^']*)'/.exec(message)?.[1];
  if (unknown === undefined) return `${message.split('. ')[0] ?? message}; see --help`;
  const flags = [...settings.map((setting) => flagName(setting.env)), '--help', '--print-schema'];
  const meant = closestName(unknown.replace(/=.*/, ''), flags);
  const setting = settings.find((each) => flagName(each.env) === meant);
  const suggestion = meant === undefined ? '' : ` Did you mean ${meant}${setting ? ` (${setting.env})` : ''}?`;
  return `Unknown option '${unknown}'.${suggestion} See --help for every setting.`;
}

/**
 * The candidate closest to `name` (edit distance, a swap of neighbours counting one), when it is
 * close enough to be a misspelling of it: for "did you mean" messages.
 */
export function closestName(name: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (best === undefined || distance < best.distance) best = { candidate, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(name.length / 3)) ? best.candidate : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => rows[i]?.[j] ?? Infinity;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        distance = Math.min(distance, at(i - 2, j - 2) + 1);
      (rows[i] as number[])[j] = distance;
    }
  }
  return at(a.length, b.length);
}

/** What `npm start` is asked to do: print `--help`, print the subgraph SDL (`--print-schema`), or serve. */
export type StartCommand = 'help' | 'print-schema' | 'serve';

/** Reads the command from the command line; either flag wins over every setting, and `--help` over `--print-schema`. */
export function startCommand(argv: readonly string[] = process.argv.slice(2)): StartCommand {
  if (argv.includes('--help')) return 'help';
  if (argv.includes('--print-schema')) return 'print-schema';
  return 'serve';
}

/** The text of `--help`. */
export function helpText(): string {
  const rows = SETTINGS.map((setting) => {
    const production = 'productionDefault' in setting ? `; ${setting.productionDefault} when NODE_ENV=production` : '';
    const defaults = setting.default !== undefined ? ` (default ${setting.default}${production})` : '';
    return `  ${flagName(setting.env).padEnd(32)} ${setting.env.padEnd(30)} ${setting.description}${defaults}`;
  });
  return [
    'Usage: npm start -- [flags]   (each flag can also be set by its environment variable)',
    '',
    ...rows,
    `  ${'--print-schema'.padEnd(63)} print the subgraph SDL (for a schema registry) and exit`,
    `  ${'--help'.padEnd(63)} print this and exit`,
  ].join('\n');
}
