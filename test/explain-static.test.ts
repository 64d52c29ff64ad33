/**
 * Static explain (`npm run explain`): the upstream calls of an operation, bounded without running
 * it, from the cost table beside the resolvers (src/resolvers/upstream-costs.ts), which must
 * list what each resolver calls; and the N+1 check.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoaders } from '../src/loaders.js';
import { inventoryResolvers } from '../src/resolvers/inventory.js';
import { orderResolvers } from '../src/resolvers/orders.js';
import { petResolvers } from '../src/resolvers/pets.js';
import { plantResolvers } from '../src/resolvers/plants.js';
import { LOADER_OPERATIONS, UPSTREAM_COSTS, type FieldCosts } from '../src/resolvers/upstream-costs.js';
import { userResolvers } from '../src/resolvers/users.js';
import { createSchema } from '../src/schema.js';
import type { PetstoreApi } from '../src/upstream/petstore.js';
import {
  callsPerItemWithoutLoader,
  explainSource,
  formatPlan,
  operationRoutes,
  planOperations,
  type Route,
} from '../scripts/explain-plan.js';
import { PROJECT_ROOT } from './helpers/process.js';

const schema = createSchema();
let routes: Awaited<ReturnType<typeof operationRoutes>>;
let dir: string;

beforeAll(async () => {
  routes = operationRoutes();
  dir = await mkdtemp(join(tmpdir(), 'explain-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** What `npm run explain` prints for each operation of `source`. */
function explained(source: string): string[] {
  const { plans, errors } = explainSource(schema, source);
  expect(errors).toEqual([]);
  return plans.map((plan) => formatPlan(plan, routes));
}

describe('an operation explained', () => {
  it('an order and its pet: one order, at most one pet, each through a loader', () => {
    expect(explained('query Order { order(id: 1) { id pet { name } } }')).toEqual([
      'query Order: ≤ 1 × GET /store/order/{orderId} (deduplicated) + ≤ 1 × GET /pet/{petId} (deduplicated)\n' +
        '  at most 2 upstream calls',
    ]);
  });

  it('a list argument multiplies its calls: literal (each distinct value once) or a variable (a symbol)', () => {
    expect(
      explained(`
        query Pets($ids: [ID!]!, $statuses: [PetStatus!]!) {
          pets(ids: $ids) { id }
          petsByStatus(status: $statuses) { id }
        }
        query Literal { pets(ids: [1, 2, 2]) { id } petsByTags(tags: ["a", "b"]) { id } inventory { entries { status } } }
      `),
    ).toEqual([
      'query Pets: ≤ n₁ × GET /pet/{petId} (deduplicated) + ≤ n₂ × GET /pet/findByStatus\n' +
        '  where n₁ = the number of values in $ids\n' +
        '  where n₂ = the number of values in $statuses',
      'query Literal: ≤ 2 × GET /pet/{petId} (deduplicated) + 2 × GET /pet/findByTags + 1 × GET /store/inventory\n' +
        '  at most 5 upstream calls',
    ]);
  });

  it('the same call in several fields and fragments is added up; a mutation lists its conditional read-back', () => {
    expect(
      explained(`
        fragment Ordered on Order { pet { id } }
        query Two { a: order(id: 1) { ...Ordered } b: order(id: 2) { ... on Order { pet { name } } } }
        mutation Rename { updatePetWithForm(id: 1, name: "Rex") { id } }
      `),
    ).toEqual([
      'query Two: ≤ 2 × GET /store/order/{orderId} (deduplicated) + ≤ 2 × GET /pet/{petId} (deduplicated)\n' +
        '  at most 4 upstream calls',
      'mutation Rename: 1 × POST /pet/{petId} + ≤ 1 × GET /pet/{petId} (deduplicated, only when the upstream answers without the pet)\n' +
        '  at most 2 upstream calls',
    ]);
  });

  it('exact when nothing is left to chance; @include makes a call a bound; no call at all is said', () => {
    expect(
      explained(`
        query Exact { inventory { entries { quantity } } }
        query Maybe($more: Boolean!) { inventory @include(if: $more) { entries { quantity } } }
        query Nothing { __typename }
      `),
    ).toEqual([
      'query Exact: 1 × GET /store/inventory\n  exactly 1 upstream call',
      'query Maybe: ≤ 1 × GET /store/inventory\n  at most 1 upstream call',
      'query Nothing: no upstream call',
    ]);
  });

  it('fields below a list are counted once per item: by the list argument that sizes it, or a symbol of their own', () => {
    // A table in which Pet.owner is resolved per pet through a loader (the real schema has no such field).
    const sdl = createSchema();
    const costs: FieldCosts = {
      ...UPSTREAM_COSTS,
      'Pet.category': [{ operation: 'getUserByName', loader: 'userByName' }],
    };
    const document = parse(`
      query Listed($ids: [ID!]!) { pets(ids: $ids) { category { name } } petsByStatus(status: [SOLD]) { category { name } } }
    `);

    expect(planOperations(sdl, document, costs).map((plan) => formatPlan(plan, routes))).toEqual([
      'query Listed: ≤ n₁ × GET /pet/{petId} (deduplicated) + ≤ (n₁ + m₁) × GET /user/{username} (deduplicated) + ' +
        '1 × GET /pet/findByStatus\n' +
        '  where n₁ = the number of values in $ids\n' +
        '  where m₁ = the items petsByStatus answers with',
    ]);
  });

  it('a document that does not parse, or does not validate against the schema, is refused with the reason', () => {
    expect(explainSource(schema, '{ pet(id: 1) { id ').errors).toEqual(['Syntax Error: Expected Name, found <EOF>.']);
    expect(explainSource(schema, '{ pet(id: 1) { nickname } }').errors).toEqual([
      'Cannot query field "nickname" on type "Pet". Did you mean "name"?',
    ]);
  });
});

describe('the GraphiQL examples', () => {
  it('are each explained (as .ci/run does), every operation with a numeric bound', async () => {
    const files = (await readdir(join(PROJECT_ROOT, 'schema/examples'))).filter((name) => name.endsWith('.graphql'));

    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const { plans, errors } = explainSource(
        schema,
        await readFile(join(PROJECT_ROOT, 'schema/examples', file), 'utf8'),
      );
      expect(errors, file).toEqual([]);
      for (const plan of plans) expect(plan.total?.calls, `${file} ${plan.title}`).toBeGreaterThan(0);
    }
  });
});

describe('the routes of the REST operations', () => {
  it('are asked of the area modules: every operation, its method and path template', () => {
    expect(routes.getPetById).toEqual({ method: 'GET', template: '/pet/{petId}' });
    expect(routes.getOrderById).toEqual({ method: 'GET', template: '/store/order/{orderId}' });
    expect(routes.uploadFile).toEqual({ method: 'POST', template: '/pet/{petId}/uploadImage' });
    expect(routes.findPetsByStatus).toEqual({ method: 'GET', template: '/pet/findByStatus' });
    expect(routes.createPlant).toEqual({ method: 'POST', template: '/plants' });
    expect(Object.keys(routes)).toHaveLength(18);
    for (const route of Object.values<Route>(routes)) expect(route.template).toMatch(/^\/[\w/{}]+$/);
  });
});

/** What a resolver's code calls: area functions (`petstore.x(`, `plants.x(`) and loaders it loads from. */
function callsIn(resolver: (...args: never[]) => unknown): { operations: string[]; loaders: string[] } {
  const code = resolver.toString();
  const operations = [...code.matchAll(/\b(?:petstore|plants)\.(\w+)\(/g)].map((match) => match[1] ?? '');
  const loaders = [...code.matchAll(/\bloaders\.(\w+)(?:\.clear\([^)]*\))?\.load(?:Many)?\(/g)].map(
    (match) => match[1] ?? '',
  );
  return { operations: [...new Set(operations)].sort(), loaders: [...new Set(loaders)].sort() };
}

/** Every resolver function of the gateway, by `Type.field`. */
function resolverFunctions(): Map<string, (...args: never[]) => unknown> {
  const found = new Map<string, (...args: never[]) => unknown>();
  for (const resolvers of [petResolvers, orderResolvers, inventoryResolvers, userResolvers, plantResolvers])
    for (const [type, fields] of Object.entries(resolvers as Record<string, unknown>))
      if (typeof fields === 'object' && fields !== null)
        for (const [field, resolver] of Object.entries(fields))
          if (typeof resolver === 'function') found.set(`${type}.${field}`, resolver as (...args: never[]) => unknown);
  return found;
}

describe('the cost table', () => {
  it('lists exactly what each resolver calls, and nothing for a resolver that calls nothing', () => {
    const listed: Record<string, { operations: string[]; loaders: string[] }> = {};
    const called: Record<string, { operations: string[]; loaders: string[] }> = {};
    for (const [key, resolver] of resolverFunctions()) {
      const calls = callsIn(resolver);
      if (calls.operations.length + calls.loaders.length > 0) called[key] = calls;
    }
    for (const [key, calls] of Object.entries(UPSTREAM_COSTS)) {
      // Federation's _entities is @apollo/subgraph's; it calls each type's __resolveReference, listed too.
      if (key === 'Query._entities') continue;
      listed[key] = {
        operations: [
          ...new Set(calls.filter((call) => !call.loader).flatMap((call) => [call.operation].flat())),
        ].sort(),
        loaders: [...new Set(calls.flatMap((call) => (call.loader ? [call.loader].flat() : [])))].sort(),
      };
    }

    expect(listed).toEqual(called);
    expect(Object.keys(called).length).toBeGreaterThan(20);
  });

  it("names each loader's REST operation as the loader calls it", async () => {
    const seen: string[] = [];
    const recording: Pick<PetstoreApi, 'getPetById' | 'getOrderById' | 'getUserByName'> = {
      getPetById: (_credentials, id) => (seen.push(`getPetById ${id}`), Promise.resolve({ id })),
      getOrderById: (id) => (seen.push(`getOrderById ${id}`), Promise.resolve({ id })),
      getUserByName: (name) => (seen.push(`getUserByName ${name}`), Promise.resolve({ username: name })),
    };
    const loaders = createLoaders(recording, {});

    await Promise.all([loaders.petById.load('1'), loaders.orderById.load('2'), loaders.userByName.load('u')]);

    expect(seen.sort()).toEqual(
      [
        `${LOADER_OPERATIONS.petById} 1`,
        `${LOADER_OPERATIONS.orderById} 2`,
        `${LOADER_OPERATIONS.userByName} u`,
      ].sort(),
    );
  });

  it("names only fields of the schema (or a type's __resolveReference)", () => {
    for (const key of Object.keys(UPSTREAM_COSTS)) {
      const [type = '', field = ''] = key.split('.');
      const named = schema.getType(type);
      expect(named, key).toBeDefined();
      if (field !== '__resolveReference')
        expect(Object.keys((named as { getFields(): object }).getFields()), key).toContain(field);
    }
  });
});

describe('the N+1 check', () => {
  it("passes on the gateway's table: every field resolved per list item goes through a loader", () => {
    expect(callsPerItemWithoutLoader(schema)).toEqual([]);
  });

  it('fails on a field of a type that comes in lists (or below one) calling the upstream per item without a loader', () => {
    const costs: FieldCosts = {
      ...UPSTREAM_COSTS,
      // Pet comes in lists (pets, petsByStatus); Category is below Pet; Order is a list item of nothing but _entities.
      'Pet.category': [{ operation: 'getUserByName' }],
      'Category.name': [{ operation: 'getInventory' }],
      'Order.pet': [{ operation: 'getPetById' }],
      // A root field is run once per operation, not per item: not an N+1.
      'Query.inventory': [{ operation: 'getInventory' }],
      // Through a loader: one call per distinct key, whatever the list.
      'Pet.tags': [{ operation: 'getUserByName', loader: 'userByName' }],
    };

    expect(callsPerItemWithoutLoader(schema, costs)).toEqual([
      'Order.pet: calls getPetById once per Order without a request loader (n Order items make n calls): go through one of src/loaders.ts',
      'Pet.category: calls getUserByName once per Pet without a request loader (n Pet items make n calls): go through one of src/loaders.ts',
      'Category.name: calls getInventory once per Category without a request loader (n Category items make n calls): go through one of src/loaders.ts',
    ]);
  });
});

describe('npm run explain', () => {
  const run = (args: readonly string[]) =>
    promisify(execFile)('npm', ['run', '--silent', 'explain', '--', ...args], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );

  it('prints each operation of each file, and the N+1 check with --check; exits 0', async () => {
    const file = join(dir, 'order.graphql');
    await writeFile(file, 'query Order($id: ID!) { order(id: $id) { pet { id } } }');

    const { code, stdout, stderr } = await run(['--check', file]);

    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toBe(
      `${file}\n` +
        '  query Order: ≤ 1 × GET /store/order/{orderId} (deduplicated) + ≤ 1 × GET /pet/{petId} (deduplicated)\n' +
        '    at most 2 upstream calls\n' +
        'N+1 check: every field resolved per list item reaches the upstream through a loader\n',
    );
  });

  it('exits 1 and says why when a file does not validate against the schema', async () => {
    const file = join(dir, 'bad.graphql');
    await writeFile(file, '{ pet(id: 1) { nickname } }');

    const { code, stderr } = await run([file]);

    expect(code).toBe(1);
    expect(stderr).toBe(
      `${file}: not a valid document for the gateway's schema\n` +
        '  Cannot query field "nickname" on type "Pet". Did you mean "name"?\n',
    );
  });
});
