/**
 * `schema/printed/` holds what the gateway serves, committed so that a change to the graph shows
 * in review and CI can compare it with the previous commit's (`npm run check:schema`). These tests
 * fail, naming the command that rewrites it, when it differs from what a running gateway answers.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildClientSchema, getIntrospectionQuery, printSchema, type IntrospectionQuery } from 'graphql';
import { describe, expect, it } from 'vitest';
import { PRINTED_SCHEMA_COMMAND, PRINTED_SCHEMA_FOLDER } from '../scripts/check-schema-changes.js';
import { PROJECT_ROOT } from './helpers/process.js';
import { useStack } from './helpers/stack.js';

const stack = useStack();

const committed = (file: string) => readFileSync(join(PROJECT_ROOT, PRINTED_SCHEMA_FOLDER, file), 'utf8');
const stale = (file: string) =>
  `${PRINTED_SCHEMA_FOLDER}/${file} differs from what the gateway serves: run \`${PRINTED_SCHEMA_COMMAND}\` and commit the result`;

/** The public API as an app sees it: the gateway's introspection answer, printed. */
async function servedApi(): Promise<string> {
  const result = await stack.gql(
    getIntrospectionQuery({ directiveIsRepeatable: true, specifiedByUrl: true, inputValueDeprecation: true }),
  );
  expect(result.errors).toBeUndefined();
  const introspection = { __schema: result.data?.['__schema'] } as IntrospectionQuery;
  return `${printSchema(buildClientSchema(introspection))}\n`;
}

/** What a router composes: the gateway's answer to `{ _service { sdl } }`. */
async function servedSubgraph(): Promise<string> {
  const result = await stack.gql('{ _service { sdl } }');
  return `${(result.data?.['_service'] as { sdl: string }).sdl}\n`;
}

describe('schema/printed/', () => {
  it('api.graphql is the public API the gateway serves (its introspection, printed)', async () => {
    const served = await servedApi();

    expect(committed('api.graphql'), stale('api.graphql')).toBe(served);
    expect(served).toMatch(/^type Pet \{$/m);
    expect(stack.upstream()).toEqual([]);
  });

  it('subgraph.graphql is the subgraph SDL the gateway serves, entity keys included', async () => {
    const served = await servedSubgraph();

    expect(committed('subgraph.graphql'), stale('subgraph.graphql')).toBe(served);
    expect(served).toMatch(/^type Pet\s+@key\(fields: "id"\)/m);
    expect(stack.upstream()).toEqual([]);
  });

  it(`${PRINTED_SCHEMA_COMMAND} writes what the gateway serves`, async () => {
    const folder = mkdtempSync(join(tmpdir(), 'printed-schema-'));
    try {
      // The script that the npm script runs, into a temporary folder instead of schema/printed.
      const { stderr } = await promisify(execFile)(
        join(PROJECT_ROOT, 'node_modules/.bin/tsx'),
        ['scripts/printed-schema.ts', folder],
        { cwd: PROJECT_ROOT, encoding: 'utf8' },
      );

      expect(stderr).toBe(`${join(folder, 'api.graphql')}: written\n${join(folder, 'subgraph.graphql')}: written\n`);
      expect(readFileSync(join(folder, 'api.graphql'), 'utf8')).toBe(await servedApi());
      expect(readFileSync(join(folder, 'subgraph.graphql'), 'utf8')).toBe(await servedSubgraph());
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
