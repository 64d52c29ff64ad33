/**
 * The printed SDL the gateway serves, committed in `schema/printed/` so that a change to the
 * graph shows in review as a change to one file, and so that CI can compare it with the previous
 * commit's (`scripts/check-schema-changes.ts`). `npm run schema:printed` rewrites the folder;
 * `test/printed-schema.test.ts` fails when it differs from what a running gateway answers.
 *
 * Two files, because the gateway has two kinds of callers and each sees a different document:
 * - `api.graphql`: the public API, as an app calling the gateway directly sees it through
 *   introspection (graphql-js's `printSchema`, which is the same text as the printed
 *   introspection). It has the federation fields `_entities` and `_service`, and none of the
 *   applied directives, which introspection does not carry.
 * - `subgraph.graphql`: what routers compose, exactly the answer to `{ _service { sdl } }` and the
 *   output of `npm run schema:print`. It carries the federation `@link` and each entity's `@key`:
 *   removing a key breaks every router and subgraph that resolves the entity by it, and only this
 *   file shows that.
 *
 * Each file is the served text byte for byte (plus a final newline), with no header comment,
 * so that it can be handed to rover or a schema registry as it is; `schema/printed/README.md`
 * says that they are generated.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printSchema, type GraphQLSchema } from 'graphql';
import { withIncrementalDirectives } from '../src/plugins/incremental-delivery.js';
import { createSchema, printSubgraphSdl } from '../src/schema.js';
import { PRINTED_SCHEMA_FOLDER } from './check-schema-changes.js';

/**
 * Each printed file (its name in the folder) and its text; by default of the schema as the gateway
 * serves it, with the `@defer` and `@stream` directives its plugin adds.
 */
export function printedSchemas(
  schema: GraphQLSchema = withIncrementalDirectives(createSchema()),
): { file: string; sdl: string }[] {
  return [
    { file: 'api.graphql', sdl: `${printSchema(schema)}\n` },
    { file: 'subgraph.graphql', sdl: `${printSubgraphSdl(schema)}\n` },
  ];
}

// `tsx scripts/printed-schema.ts [folder]`: the folder defaults to schema/printed (the test writes
// into a temporary one).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const named = process.argv[2];
  const folder = named ?? fileURLToPath(new URL(`../${PRINTED_SCHEMA_FOLDER}/`, import.meta.url));
  mkdirSync(folder, { recursive: true });
  for (const { file, sdl } of printedSchemas()) {
    writeFileSync(join(folder, file), sdl);
    console.error(`${join(named ?? PRINTED_SCHEMA_FOLDER, file)}: written`);
  }
}
