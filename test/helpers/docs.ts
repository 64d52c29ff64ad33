/**
 * The pages a user reads: the README and the pages of docs/ (its contributing/ and decisions/
 * folders aside), which test/docs.test.ts holds to their limits and test/docs-examples.test.ts runs.
 */
import { readdirSync } from 'node:fs';
import { PROJECT_ROOT } from './process.js';

/** The user pages, relative to the project. */
export const USER_PAGES: readonly string[] = [
  'README.md',
  ...readdirSync(`${PROJECT_ROOT}docs`)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
