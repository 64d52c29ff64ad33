/**
 * The table of what each REST operation feeds in the graph (`src/contract/graphql-impact.ts`),
 * checked against the code it describes: the operations the upstream modules make, the gateway's
 * documents, the executable schema, and the resolvers that make the calls.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  coordinatePlace,
  PETSTORE_USES,
  PLANTS_USES,
  rootPlace,
  type Area,
  type OperationUse,
} from '../src/contract/graphql-impact.js';
import { operationsOf } from '../src/contract/openapi.js';
import { createSchema } from '../src/schema.js';
import type { UpstreamClient } from '../src/upstream/http.js';
import { createPetstoreApi } from '../src/upstream/petstore.js';
import { createPlantsApi } from '../src/upstream/plants.js';
import { gatewayDocument } from './helpers/openapi-edits.js';
import { PROJECT_ROOT } from './helpers/process.js';

const schema = createSchema();
const AREAS: [Area, Readonly<Record<string, OperationUse>>][] = [
  ['petstore', PETSTORE_USES],
  ['plants', PLANTS_USES],
];

/** A client that is never called: the area modules only bind their functions to it. */
const unused = (service: Area): UpstreamClient => ({
  service,
  request: () => Promise.reject(new Error('not called')),
  close: () => Promise.resolve(),
});

/** The resolvers and the loaders, where the GraphQL fields call the upstream functions. */
const callers = [
  'src/loaders.ts',
  ...readdirSync(join(PROJECT_ROOT, 'src/resolvers')).map((file) => `src/resolvers/${file}`),
]
  .map((file) => readFileSync(join(PROJECT_ROOT, file), 'utf8'))
  .join('\n');

describe('the operations', () => {
  test("are the upstream modules' functions, each once", () => {
    const petstore = createPetstoreApi(unused('petstore'), { bodyFormat: 'json', accept: 'json' });
    expect(Object.keys(PETSTORE_USES).sort()).toEqual(Object.keys(petstore).sort());
    expect(Object.keys(PLANTS_USES).sort()).toEqual(Object.keys(createPlantsApi(unused('plants'))).sort());
  });

  test.each(AREAS)("are the operations of the gateway's %s document, with the parameters it declares", (area, uses) => {
    const document = gatewayDocument(area);
    const operations = operationsOf(document, (message) => new Error(message));
    expect(operations.map(({ operation }) => operation['operationId']).sort()).toEqual(Object.keys(uses).sort());
    for (const { operation, sharedParameters, key } of operations) {
      const declared = [...sharedParameters, ...((operation['parameters'] as unknown[] | undefined) ?? [])].map(
        (parameter) => {
          const ref = (parameter as { $ref?: string }).$ref;
          return ref === undefined ? (parameter as { name: string }).name : ref.split('/').pop();
        },
      );
      const use: OperationUse | undefined = uses[String(operation['operationId'])];
      if (use === undefined) throw new Error(`${key} is not in the table`);
      // The shared path parameter `PetId` is declared by reference; its name is petId.
      const names = declared.map((name) => (name === 'PetId' ? 'petId' : name));
      for (const parameter of Object.keys(use.parameters))
        expect(names, `${key} declares ${parameter}`).toContain(parameter);
    }
  });
});

describe('the GraphQL coordinates', () => {
  const rows = AREAS.flatMap(([, uses]) => Object.entries(uses));

  test.each(rows)('of %s exist in the executable schema', (_, use) => {
    const coordinates = [
      ...use.fields,
      ...Object.values(use.parameters).flatMap((parameter) => parameter.from),
      ...(use.mapValues === undefined ? [] : [use.mapValues]),
    ];
    for (const coordinate of coordinates) expect(coordinatePlace(schema, coordinate), coordinate).toBeDefined();
    for (const type of [use.answer, use.body])
      if (type !== undefined) expect(rootPlace(schema, type), type).toBeDefined();
  });

  test.each(rows)('of %s: the operation is called by the resolvers or loaders', (operationId) => {
    expect(callers).toMatch(new RegExp(`\\.${operationId}\\(`));
  });

  test('every root field that calls an upstream is in the table', () => {
    const listed = new Set(rows.flatMap(([, use]) => use.fields));
    const roots = [schema.getQueryType(), schema.getMutationType()].flatMap((type) =>
      Object.keys(type?.getFields() ?? {}).map((name) => `${type?.name ?? ''}.${name}`),
    );
    // `_service` is the federation SDL, answered by the gateway itself.
    expect(roots.filter((coordinate) => !listed.has(coordinate))).toEqual(['Query._service']);
  });
});
