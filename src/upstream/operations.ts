/**
 * The REST operations the gateway calls, one row per operationId and one table per area: the
 * one home of what an operation is. Everything that calls, keeps, watches or checks an
 * operation reads its row instead of switching on names or paths:
 *
 * - the area clients (`petstore.ts`, `plants.ts`) build each call from it (method, path, the
 *   credential its security declares, what it reads or changes: {@link callOf});
 * - the upstream cache files a read under the resources it reads, and writes drop them
 *   (`cache.ts`, {@link resourceTags}, {@link changedTags}); UPSTREAM_CACHE may name the rows
 *   marked `cacheable`;
 * - a write keeps later reads of the resources it may change from joining a call in flight
 *   (`http.ts`, `in-flight.ts`);
 * - live queries poll what a read read (`src/live/identifiers.ts`), and writes tell what they
 *   changed ({@link changesOf}) to the upstream cache and live queries;
 * - the response cache drops the kept answers holding a type a mutation changes
 *   ({@link typesChangedBy});
 * - `npm run explain` takes each call's method and path from it, and the upstream check
 *   (`src/contract/`) what each operation feeds in the graph (`graph`).
 *
 * Adding a REST operation: a row here, its function in the area's client, the SDL, a resolver and
 * a test (docs/adding-a-rest-operation.md). Path templates are written here and nowhere else in
 * `src/` (the emulator and the OpenAPI documents aside): a test holds the code to it.
 */
import type { Security } from '../credentials.js';
import type { UpstreamChange } from './changes.js';
import type { UpstreamService } from './failure.js';

/** The kinds of REST resources the pet store's operations read and change. */
type ResourceKind = 'pet' | 'order' | 'inventory' | 'user';

/** What a read reads: one item (by a path parameter), a list of items, or a resource without parts. */
type ReadOf = { kind: ResourceKind; key?: string; list?: true };

/** A resource as one call reads or changes it: with its key when it is one item, `list` for a list. */
export type Resource = { kind: ResourceKind; key?: string; list?: true };

/** A parameter the gateway sends, and the GraphQL arguments (`Query.pet(id:)`) its value comes from. */
export type ParameterUse = {
  from: readonly string[];
  /** sent on every call (a path parameter, a required argument); otherwise only when the argument is given */
  always: boolean;
  /** a list parameter to which the gateway gives exactly one value per call, so its style does not matter */
  oneValue?: boolean;
};

/** What an operation feeds in the graph, for the upstream check (`src/contract/graphql-impact.ts`). */
export type GraphUse = {
  /** the GraphQL fields whose resolvers make the call (`Query.pet`, `Order.pet`) */
  fields: readonly string[];
  /** the GraphQL type the answer becomes; absent when the answer's body is not read */
  answer?: string;
  /** for an answer that is a map (`Inventory`): the GraphQL field each of its values becomes */
  mapValues?: string;
  /** the GraphQL input type the body is written from; absent when the call has no body */
  body?: string;
  /** the media type the body is always sent in; absent for bodies that follow PETSTORE_BODY_FORMAT */
  bodyMediaType?: string;
  /** the parameters the gateway sends, by name in the gateway's document */
  parameters: Readonly<Record<string, ParameterUse>>;
};

/** One REST operation. */
export type OperationRow = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** the path template, as the OpenAPI document writes it (`/pet/{petId}`) */
  path: string;
  /** the one credential it is sent with (`credentialHeaders`) */
  security: Security;
  /** what a read (GET) reads */
  reads?: ReadOf;
  /** what a write may change: later reads of these kinds do not join a read in flight */
  changes?: readonly ResourceKind[];
  /** a read the upstream cache may keep, and UPSTREAM_CACHE may give a default freshness */
  cacheable?: true;
  graph: GraphUse;
};

// `Query._entities`: a federated router asking this subgraph for pets and users by key.
const PET_READERS = ['Query.pet', 'Query.pets', 'Order.pet', 'Query._entities'];
/** A parameter fed by one argument; sent always unless said. */
const from = (argument: string, always = true): ParameterUse => ({ from: [argument], always });
const PET_WRITE = ['pet', 'inventory'] as const;
const ORDER_WRITE = ['order', 'inventory'] as const;
const USER_WRITE = ['user'] as const;

/** The pet store's operations, by operationId (`schema/petstore.openapi.yaml`). */
export const PETSTORE_OPERATIONS = {
  addPet: {
    method: 'POST',
    path: '/pet',
    security: 'bearer',
    changes: PET_WRITE,
    graph: { fields: ['Mutation.addPet'], answer: 'Pet', body: 'PetInput', parameters: {} },
  },
  updatePet: {
    method: 'PUT',
    path: '/pet',
    security: 'bearer',
    changes: PET_WRITE,
    graph: { fields: ['Mutation.updatePet'], answer: 'Pet', body: 'PetInput', parameters: {} },
  },
  findPetsByStatus: {
    method: 'GET',
    path: '/pet/findByStatus',
    security: 'bearer',
    reads: { kind: 'pet', list: true },
    cacheable: true,
    graph: {
      fields: ['Query.petsByStatus'],
      answer: 'Pet',
      parameters: { status: { from: ['Query.petsByStatus(status:)'], always: true, oneValue: true } },
    },
  },
  findPetsByTags: {
    method: 'GET',
    path: '/pet/findByTags',
    security: 'bearer',
    reads: { kind: 'pet', list: true },
    cacheable: true,
    graph: {
      fields: ['Query.petsByTags'],
      answer: 'Pet',
      parameters: { tags: { from: ['Query.petsByTags(tags:)'], always: true, oneValue: true } },
    },
  },
  getPetById: {
    method: 'GET',
    path: '/pet/{petId}',
    security: 'apiKeyOrBearer',
    reads: { kind: 'pet', key: 'petId' },
    cacheable: true,
    graph: {
      fields: PET_READERS,
      answer: 'Pet',
      parameters: { petId: { from: ['Query.pet(id:)', 'Query.pets(ids:)', 'Order.pet'], always: true } },
    },
  },
  updatePetWithForm: {
    method: 'POST',
    path: '/pet/{petId}',
    security: 'bearer',
    changes: PET_WRITE,
    graph: {
      fields: ['Mutation.updatePetWithForm'],
      answer: 'Pet',
      parameters: {
        petId: from('Mutation.updatePetWithForm(id:)'),
        name: from('Mutation.updatePetWithForm(name:)', false),
        status: from('Mutation.updatePetWithForm(status:)', false),
      },
    },
  },
  deletePet: {
    method: 'DELETE',
    path: '/pet/{petId}',
    security: 'bearer',
    changes: PET_WRITE,
    graph: { fields: ['Mutation.deletePet'], parameters: { petId: from('Mutation.deletePet(id:)') } },
  },
  uploadFile: {
    method: 'POST',
    path: '/pet/{petId}/uploadImage',
    security: 'bearer',
    changes: PET_WRITE,
    graph: {
      fields: ['Mutation.uploadPetImage'],
      answer: 'ApiResponse',
      bodyMediaType: 'application/octet-stream',
      parameters: {
        petId: from('Mutation.uploadPetImage(petId:)'),
        additionalMetadata: from('Mutation.uploadPetImage(additionalMetadata:)', false),
      },
    },
  },
  getInventory: {
    method: 'GET',
    path: '/store/inventory',
    security: 'apiKey',
    reads: { kind: 'inventory' },
    cacheable: true,
    graph: { fields: ['Query.inventory'], answer: 'Inventory', mapValues: 'InventoryEntry.quantity', parameters: {} },
  },
  placeOrder: {
    method: 'POST',
    path: '/store/order',
    security: 'none',
    changes: ORDER_WRITE,
    graph: { fields: ['Mutation.placeOrder'], answer: 'Order', body: 'OrderInput', parameters: {} },
  },
  getOrderById: {
    method: 'GET',
    path: '/store/order/{orderId}',
    security: 'none',
    reads: { kind: 'order', key: 'orderId' },
    cacheable: true,
    graph: { fields: ['Query.order'], answer: 'Order', parameters: { orderId: from('Query.order(id:)') } },
  },
  deleteOrder: {
    method: 'DELETE',
    path: '/store/order/{orderId}',
    security: 'none',
    changes: ORDER_WRITE,
    graph: { fields: ['Mutation.deleteOrder'], parameters: { orderId: from('Mutation.deleteOrder(id:)') } },
  },
  createUser: {
    method: 'POST',
    path: '/user',
    security: 'none',
    changes: USER_WRITE,
    graph: { fields: ['Mutation.createUser'], answer: 'User', body: 'UserInput', parameters: {} },
  },
  createUsersWithListInput: {
    method: 'POST',
    path: '/user/createWithList',
    security: 'none',
    changes: USER_WRITE,
    graph: {
      fields: ['Mutation.createUsers'],
      answer: 'User',
      body: 'UserInput',
      bodyMediaType: 'application/json',
      parameters: {},
    },
  },
  getUserByName: {
    method: 'GET',
    path: '/user/{username}',
    security: 'none',
    reads: { kind: 'user', key: 'username' },
    cacheable: true,
    graph: {
      fields: ['Query.user', 'Query._entities'],
      answer: 'User',
      parameters: { username: from('Query.user(username:)') },
    },
  },
  updateUser: {
    method: 'PUT',
    path: '/user/{username}',
    security: 'none',
    changes: USER_WRITE,
    graph: {
      fields: ['Mutation.updateUser'],
      answer: 'User',
      body: 'UserInput',
      parameters: { username: from('Mutation.updateUser(username:)') },
    },
  },
  deleteUser: {
    method: 'DELETE',
    path: '/user/{username}',
    security: 'none',
    changes: USER_WRITE,
    graph: { fields: ['Mutation.deleteUser'], parameters: { username: from('Mutation.deleteUser(username:)') } },
  },
} as const satisfies Record<string, OperationRow>;

/** The plant area's operations, by operationId (`schema/plants.openapi.yaml`). Its security applies to the whole area. */
export const PLANTS_OPERATIONS = {
  createPlant: {
    method: 'POST',
    path: '/plants',
    security: 'bearer',
    graph: {
      fields: ['Mutation.createPlant'],
      answer: 'Plant',
      body: 'NewPlantInput',
      bodyMediaType: 'application/json',
      parameters: {},
    },
  },
} as const satisfies Record<string, OperationRow>;

/** An operationId of the pet store. */
export type PetstoreOperationId = keyof typeof PETSTORE_OPERATIONS;
/** An operationId of the plant area. */
type PlantsOperationId = keyof typeof PLANTS_OPERATIONS;
/** An operationId of either area. */
export type OperationId = PetstoreOperationId | PlantsOperationId;

/** Each area's table. */
export const OPERATIONS: Readonly<Record<UpstreamService, Readonly<Record<string, OperationRow>>>> = {
  petstore: PETSTORE_OPERATIONS,
  plants: PLANTS_OPERATIONS,
};

/** The row of an operationId, in whichever area it is (operationIds are unique across both). */
export function operationRow(operation: string): OperationRow | undefined {
  return (
    (PETSTORE_OPERATIONS as Record<string, OperationRow>)[operation] ??
    (PLANTS_OPERATIONS as Record<string, OperationRow>)[operation]
  );
}

/** The operations a per-operation default of UPSTREAM_CACHE may name. */
export const CACHEABLE_OPERATIONS: readonly string[] = Object.entries(PETSTORE_OPERATIONS)
  .filter(([, row]) => 'cacheable' in row)
  .map(([name]) => name);

/**
 * The path of one call of `row` with its path parameters filled in, each percent-encoded as one
 * segment so that no input (`../`, `?`, `/`) can change which resource is called, and the
 * resources it reads or may change.
 */
export function callOf<O extends OperationId>(
  operation: O,
  row: OperationRow,
  params: Readonly<Record<string, string>> = {},
): { operation: O; method: OperationRow['method']; path: string; template: string; resources: Resource[] } {
  const parts = templateParts(row.path);
  let path = '';
  for (let index = 0; index < parts.length; index += 1) {
    if (index % 2 === 0) path += parts[index] ?? '';
    else {
      const value = params[parts[index] ?? ''];
      if (value === undefined) throw new Error(`${operation}: no value for {${parts[index]}}`);
      path += encodeSegment(value);
    }
  }
  return { operation, method: row.method, path, template: row.path, resources: resourcesOf(row, params) };
}

/** What one call of `row` reads (a GET) or may change (a write). */
function resourcesOf(row: OperationRow, params: Readonly<Record<string, string>>): Resource[] {
  if (row.reads === undefined) return (row.changes ?? []).map((kind) => ({ kind }));
  const { kind, key, list } = row.reads;
  if (key !== undefined) return [{ kind, key: params[key] ?? '' }];
  return [list ? { kind, list } : { kind }];
}

/** Characters a path segment may hold as they are. */
const PLAIN_SEGMENT = /^[\w~!*'()-]+$/;

/** One path segment, percent-encoded. */
function encodeSegment(value: string): string {
  if (PLAIN_SEGMENT.test(value)) return value;
  // encodeURIComponent leaves '.' alone, and a segment of '.' or '..' would be resolved away.
  return encodeURIComponent(value).replace(/\./g, '%2E');
}

/** A template split at its `{name}`s: text, name, text, … (a handful of templates, each split once). */
function templateParts(template: string): readonly string[] {
  let parts = TEMPLATE_PARTS.get(template);
  if (parts === undefined) TEMPLATE_PARTS.set(template, (parts = template.split(/\{(\w+)\}/)));
  return parts;
}
const TEMPLATE_PARTS = new Map<string, readonly string[]>();

/**
 * The upstream cache's tag of a resource: `pet:1` for one item, `pet-lists` for every list of
 * pets (any pet change may move a pet in or out of one), `inventory` for a whole resource.
 */
function resourceTag(resource: Resource): string {
  if (resource.key !== undefined) return `${resource.kind}:${resource.key}`;
  return resource.list ? `${resource.kind}-lists` : resource.kind;
}

/** The tags of what a call reads. */
export function resourceTags(resources: readonly Resource[] | undefined): string[] {
  return (resources ?? []).map(resourceTag);
}

/**
 * The tags a change makes stale: the item's own and every list of its kind (a pet may enter or
 * leave any list of pets), or the whole resource (the inventory).
 */
export function changedTags(change: UpstreamChange): string[] {
  const key = 'id' in change ? change.id : 'username' in change ? change.username : undefined;
  const kind = change.resource;
  return key === undefined ? [kind] : [resourceTag({ kind, key }), resourceTag({ kind, list: true })];
}

/** The change that would make a read resource stale: one item, or a whole resource; undefined for a list. */
export function changeOf(resource: Resource): UpstreamChange | undefined {
  const { kind, key } = resource;
  if (kind === 'inventory') return { resource: kind };
  if (key === undefined) return undefined;
  return kind === 'user' ? { resource: kind, username: key } : { resource: kind, id: key };
}

/**
 * What a write of `operation` changed, from what its row says it changes: each item of `keys`
 * (ids, or usernames) of the kinds with items, and the inventory, which has none. A key the
 * gateway does not know (a new pet whose answer could not be read) is left out.
 */
export function changesOf(operation: PetstoreOperationId, keys: readonly (string | undefined)[]): UpstreamChange[] {
  const row: OperationRow = PETSTORE_OPERATIONS[operation];
  const known = keys.filter((key) => key !== undefined);
  return (row.changes ?? []).flatMap((kind): UpstreamChange[] => {
    if (kind === 'inventory') return [{ resource: kind }];
    if (kind === 'user') return known.map((username) => ({ resource: kind, username }));
    return known.map((id) => ({ resource: kind, id }));
  });
}

/**
 * The GraphQL types whose kept answers a root field's write makes stale (`Mutation.placeOrder`:
 * `Order` and `Inventory`): the types the reads of each kind its row says it changes answer with.
 * None for a field that makes no call, or whose call changes nothing the graph reads.
 */
export function typesChangedBy(field: string): readonly string[] {
  return CHANGED_TYPES.get(field) ?? [];
}

/**
 * The GraphQL types a root field's read answers with (`Query.inventory`: `Inventory`): the
 * answers of the rows whose calls its resolver makes. None for a field that makes no call.
 */
export function typesReadBy(field: string): readonly string[] {
  return READ_TYPES.get(field) ?? [];
}

const READ_TYPES: ReadonlyMap<string, readonly string[]> = (() => {
  const read = new Map<string, string[]>();
  for (const row of [...Object.values(PETSTORE_OPERATIONS), ...Object.values(PLANTS_OPERATIONS)] as OperationRow[]) {
    if (row.reads === undefined || row.graph.answer === undefined) continue;
    for (const field of row.graph.fields) read.set(field, [...new Set([...(read.get(field) ?? []), row.graph.answer])]);
  }
  return read;
})();

const CHANGED_TYPES: ReadonlyMap<string, readonly string[]> = (() => {
  const rows: OperationRow[] = [...Object.values(PETSTORE_OPERATIONS), ...Object.values(PLANTS_OPERATIONS)];
  const typesRead = (kind: ResourceKind) =>
    rows.flatMap((row) => (row.reads?.kind === kind && row.graph.answer !== undefined ? [row.graph.answer] : []));
  const changed = new Map<string, readonly string[]>();
  for (const row of rows) {
    const types = [...new Set((row.changes ?? []).flatMap(typesRead))];
    for (const field of row.graph.fields) if (types.length > 0) changed.set(field, types);
  }
  return changed;
})();
