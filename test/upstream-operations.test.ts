/**
 * The REST operation tables (`src/upstream/operations.ts`) are the one home of what an operation
 * is: each row matches the gateway's OpenAPI document (operationId, method, path), each area
 * function has a row and each row a function, and no other module of `src/` (the emulator and
 * generated code aside) writes a path template: the client, the upstream cache, the in-flight
 * seal, live queries, explain and the upstream check all read the row.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { operationsOf, type OpenApiObject } from '../src/contract/openapi.js';
import { CACHEABLE_OPERATIONS, OPERATIONS } from '../src/upstream/operations.js';
import { createPetstoreApi } from '../src/upstream/petstore.js';
import { createPlantsApi } from '../src/upstream/plants.js';
import type { UpstreamClient } from '../src/upstream/http.js';
import { PROJECT_ROOT } from './helpers/process.js';

const DOCUMENTS = { petstore: 'schema/petstore.openapi.yaml', plants: 'schema/plants.openapi.yaml' } as const;

/** The operations of an area's document, by operationId. */
function documented(area: keyof typeof DOCUMENTS): Map<string, { method: string; path: string }> {
  const root = parse(readFileSync(`${PROJECT_ROOT}${DOCUMENTS[area]}`, 'utf8')) as OpenApiObject;
  const entries = operationsOf(root, (message) => new Error(message));
  return new Map(
    entries.map((entry) => [String(entry.operation['operationId']), { method: entry.method, path: entry.path }]),
  );
}

/** A client that is never called: the area functions are only listed. */
const unused = (service: UpstreamClient['service']): UpstreamClient => ({
  service,
  request: () => Promise.reject(new Error('not called')),
  close: () => Promise.resolve(),
});

/** Every TypeScript file of src/ that is not the table, the emulator or generated code, with its code only (comments out). */
function codeOfOtherModules(): { file: string; code: string }[] {
  return readdirSync(`${PROJECT_ROOT}src`, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .filter((file) => !/^(emulator|__generated__)\//.test(file) && file !== 'upstream/operations.ts')
    .map((file) => ({
      file,
      code: readFileSync(`${PROJECT_ROOT}src/${file}`, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, ''),
    }));
}

describe('the REST operation tables', () => {
  it.each(Object.keys(DOCUMENTS) as (keyof typeof DOCUMENTS)[])(
    "%s: each row is an operation of the area's document, by operationId, method and path",
    (area) => {
      const operations = documented(area);
      const rows = Object.entries(OPERATIONS[area]);

      for (const [name, row] of rows)
        expect({ name, method: row.method, path: row.path }).toEqual({ name, ...operations.get(name) });
      expect(rows.length).toBeGreaterThan(0);
    },
  );

  it('has a row for each area function, and a function for each row', () => {
    const petstore = createPetstoreApi(unused('petstore'), { bodyFormat: 'json', accept: 'json' });
    const plants = createPlantsApi(unused('plants'));

    expect(Object.keys(petstore).sort()).toEqual(Object.keys(OPERATIONS.petstore).sort());
    expect(Object.keys(plants).sort()).toEqual(Object.keys(OPERATIONS.plants).sort());
  });

  it('marks as cacheable reads only, and every read that names what it reads', () => {
    const reads = Object.entries(OPERATIONS.petstore).filter(([, row]) => row.method === 'GET');

    expect([...CACHEABLE_OPERATIONS].sort()).toEqual(reads.map(([name]) => name).sort());
    for (const [, row] of reads) expect(row.reads).toBeDefined();
    for (const [, row] of Object.entries(OPERATIONS.petstore).filter(([, each]) => each.method !== 'GET'))
      expect(row.changes?.length).toBeGreaterThan(0);
  });

  it('is the only place in src/ (the emulator and generated code aside) that writes a path template', () => {
    const firstSegments = new Set(
      Object.values(OPERATIONS).flatMap((table) => Object.values(table).map((row) => row.path.split('/')[1])),
    );
    const literal = new RegExp(String.raw`['"\`]/(${[...firstSegments].join('|')})\b`);

    const found = codeOfOtherModules().flatMap(({ file, code }) =>
      code
        .split('\n')
        .filter((line) => literal.test(line))
        .map((line) => `src/${file}: ${line.trim()}`),
    );

    expect(firstSegments).toEqual(new Set(['pet', 'store', 'user', 'plants']));
    expect(found).toEqual([]);
  });
});
