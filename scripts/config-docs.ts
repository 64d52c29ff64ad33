/**
 * docs/configuration.md's tables of settings, one per group, generated from the settings table in
 * `src/config/` (SETTING_GROUPS), so that a setting's default and meaning are written in one place: `npm run
 * docs` rewrites the part of the page between its markers, and `test/docs.test.ts` fails when
 * the page differs from what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EMULATOR_SETTINGS, flagName, SETTING_GROUPS } from '../src/config/index.js';
import type { Setting } from '../src/config/parse.js';

/** The page, relative to the project. */
export const CONFIGURATION_PAGE = 'docs/configuration.md';
const START = '<!-- settings:start (generated from src/config/ by `npm run docs`: edit the settings there) -->';
const END = '<!-- settings:end -->';

/** What the page shows of a setting: the settings table's own fields. */
type DocumentedSetting = Pick<Setting, 'env' | 'default' | 'productionDefault' | 'description' | 'details' | 'parse'>;

/** The values a setting accepts, as its parser states them (`0–1,000`), or undefined when it states none. */
export function accepts(setting: Pick<DocumentedSetting, 'parse'>): string | undefined {
  return 'accepts' in setting.parse && typeof setting.parse.accepts === 'string' ? setting.parse.accepts : undefined;
}

/** A table cell: a pipe inside a cell would end it. */
const cell = (text: string) => text.replace(/\|/g, '\\|');

/** One setting's row: variable, flag, default (its production default, the values it accepts), meaning. */
function row(setting: DocumentedSetting): string {
  const production =
    setting.productionDefault === undefined ? '' : `; \`${setting.productionDefault}\` when \`NODE_ENV=production\``;
  const defaults = setting.default === undefined ? 'unset' : `\`${setting.default}\`${production}`;
  const range = accepts(setting);
  const meaning = setting.details ?? setting.description;
  const values = range === undefined ? '' : ` (${range})`;
  return `| \`${setting.env}\` | \`${flagName(setting.env)}\` | ${cell(defaults + values)} | ${cell(meaning)} |`;
}

/** The generated part: the gateway's settings, a heading and a table per group, then those of the emulator run alone. */
export function settingsTables(): string {
  const header = ['| Variable | Flag | Default (values accepted) | Meaning |', '|---|---|---|---|'];
  return [
    START,
    ...SETTING_GROUPS.flatMap((group) => [`## ${group.title}`, '', ...header, ...group.settings.map(row), '']),
    '## The emulator run alone',
    '',
    '`npm run emulator` reads its own two:',
    '',
    ...header,
    ...EMULATOR_SETTINGS.map(row),
    END,
  ].join('\n');
}

/**
 * The page with its generated part replaced by the current one.
 * @throws Error when the page has lost its markers
 */
export function renderConfigurationPage(page: string): string {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${CONFIGURATION_PAGE} has lost its markers (${START} … ${END})`);
  return page.slice(0, start) + settingsTables() + page.slice(end + END.length);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = fileURLToPath(new URL(`../${CONFIGURATION_PAGE}`, import.meta.url));
  writeFileSync(file, renderConfigurationPage(readFileSync(file, 'utf8')));
  console.error(`${CONFIGURATION_PAGE}: settings written from src/config/`);
}
