/**
 * `npm run explain -- [--check] <file.graphql>...`: prints, without calling anything, the most
 * upstream calls each operation of each file can make, as a formula of its list sizes (and a
 * number when they are literal). Exits 1 when a file does not parse or validate against the
 * schema. `--check` also runs the N+1 check (scripts/explain-plan.ts), and exits 1 when a field
 * of a type that comes in lists calls the upstream once per item without a request loader.
 */
import { readFileSync } from 'node:fs';
import { createSchema } from '../src/schema.js';
import { callsPerItemWithoutLoader, explainSource, formatPlan, operationRoutes } from './explain-plan.js';

function main(argv: readonly string[]): number {
  const check = argv.includes('--check');
  const files = argv.filter((arg) => arg !== '--check');
  if (files.length === 0 && !check) {
    process.stderr.write('usage: npm run explain -- [--check] <file.graphql>...\n');
    return 2;
  }
  const schema = createSchema();
  const routes = operationRoutes();
  let failed = false;
  for (const file of files) {
    let source: string;
    try {
      source = readFileSync(file, 'utf8');
    } catch (error) {
      process.stderr.write(`${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})\n`);
      failed = true;
      continue;
    }
    const { plans, errors } = explainSource(schema, source);
    if (errors.length > 0) {
      failed = true;
      process.stderr.write(`${file}: not a valid document for the gateway's schema\n`);
      for (const error of errors) process.stderr.write(`  ${error}\n`);
      continue;
    }
    process.stdout.write(`${file}\n`);
    for (const plan of plans) process.stdout.write(`${formatPlan(plan, routes).replace(/^/gm, '  ')}\n`);
  }
  if (check) {
    const problems = callsPerItemWithoutLoader(schema);
    for (const problem of problems) process.stderr.write(`N+1: ${problem}\n`);
    if (problems.length > 0) failed = true;
    else process.stdout.write('N+1 check: every field resolved per list item reaches the upstream through a loader\n');
  }
  return failed ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
