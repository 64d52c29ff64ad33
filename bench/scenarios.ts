/**
 * The benchmark's scenarios: what each contender is asked, and the data the upstream must hold
 * for it (pets 11–50 and orders 1–50 are added to the emulator's seed before any run).
 */

/** Credentials every contender sends: the emulator accepts any non-empty value. */
export const CREDENTIAL_HEADERS = { authorization: 'Bearer bench-token', api_key: 'bench-key' } as const;

/** One scenario: a GraphQL operation for the gateway and the ceiling, and its direct REST equivalent. */
export type Scenario = {
  /** 1 to 4, as issue 11 numbers them; 5, issue 20's large answer */
  id: number;
  name: string;
  /** the GraphQL request body (JSON) the gateway and the ceiling receive */
  graphql: string;
  /** the direct contender: a GET on the emulator, or a path of the direct fan-out client */
  direct: { kind: 'rest'; path: string; headers: Record<string, string> } | { kind: 'client'; path: string };
  /** what the direct contender is, in the report */
  directLabel: string;
  /** the upstream calls the minimal client makes per request (the target for the gateway) */
  minimalCalls: number;
  /** checks one GraphQL answer before anything is measured */
  check(data: unknown): string | undefined;
};

const ORDER_IDS = Array.from({ length: 50 }, (_, index) => index + 1);
/** Order n is for pet ((n − 1) mod 10) + 1: 50 orders over the 10 seeded pets. */
export const orderPetId = (orderId: number) => ((orderId - 1) % 10) + 1;
/** 100 representations over 50 distinct ids: 1..50, twice. */
export const ENTITY_IDS = Array.from({ length: 100 }, (_, index) => String((index % 50) + 1));

const body = (query: string, variables?: Record<string, unknown>) =>
  JSON.stringify(variables ? { query, variables } : { query });

function field(data: unknown, name: string): unknown {
  return typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[name] : undefined;
}

export const SCENARIOS: readonly Scenario[] = [
  {
    id: 1,
    name: 'one pet by id',
    graphql: body('{ pet(id: 1) { id name status } }'),
    direct: { kind: 'rest', path: '/api/v3/pet/1', headers: { api_key: CREDENTIAL_HEADERS.api_key } },
    directLabel: 'GET /pet/1',
    minimalCalls: 1,
    check: (data) => (field(field(data, 'pet'), 'name') === 'Cat 1' ? undefined : 'pet 1 is not Cat 1'),
  },
  {
    id: 2,
    name: 'list by status',
    graphql: body('{ petsByStatus(status: [AVAILABLE]) { id name status category { id name } tags { id name } } }'),
    direct: {
      kind: 'rest',
      path: '/api/v3/pet/findByStatus?status=available',
      headers: { authorization: CREDENTIAL_HEADERS.authorization },
    },
    directLabel: 'GET /pet/findByStatus',
    minimalCalls: 1,
    check: (data) => {
      const pets = field(data, 'petsByStatus');
      return Array.isArray(pets) && pets.length === 21
        ? undefined
        : `expected 21 available pets, got ${Array.isArray(pets) ? pets.length : 'none'}`;
    },
  },
  {
    id: 3,
    name: 'fan-out: 50 orders, each with its pet',
    graphql: body(
      `{ ${ORDER_IDS.map((id) => `o${id}: order(id: ${id}) { id quantity status pet { id name status } }`).join(' ')} }`,
    ),
    direct: { kind: 'client', path: '/orders' },
    directLabel: 'client: 50 × GET /store/order/{id}, then 10 × GET /pet/{id}',
    minimalCalls: 60,
    check: (data) => {
      const last = field(data, 'o50');
      return field(field(last, 'pet'), 'id') === String(orderPetId(50)) ? undefined : 'order 50 does not have pet 10';
    },
  },
  {
    id: 4,
    name: 'federation: _entities, 100 Pet representations over 50 ids',
    graphql: body(
      'query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on Pet { id name status } } }',
      {
        representations: ENTITY_IDS.map((id) => ({ __typename: 'Pet', id })),
      },
    ),
    direct: { kind: 'client', path: '/entities' },
    directLabel: 'client: 50 × GET /pet/{id}',
    minimalCalls: 50,
    check: (data) => {
      const entities = field(data, '_entities');
      return Array.isArray(entities) &&
        entities.length === 100 &&
        entities.every((entity) => field(entity, 'name') !== undefined)
        ? undefined
        : 'expected 100 named pets';
    },
  },
  {
    // Issue 20: the CPU a compressed answer costs. 8.5 KB of JSON, each pet's every field: a large
    // answer, over RESPONSE_COMPRESSION_MIN_BYTES, asked with and without Accept-Encoding (run.ts).
    id: 5,
    name: 'large answer: every pet with every field',
    graphql: body(
      '{ petsByStatus(status: [AVAILABLE, PENDING, SOLD]) { id name status photoUrls category { id name } tags { id name } } }',
    ),
    direct: { kind: 'client', path: '/pets' },
    directLabel: 'client: 3 × GET /pet/findByStatus',
    minimalCalls: 3,
    check: (data) => {
      const pets = field(data, 'petsByStatus');
      return Array.isArray(pets) && pets.length === 50
        ? undefined
        : `expected 50 pets, got ${Array.isArray(pets) ? pets.length : 'none'}`;
    },
  },
];

/**
 * Adds pets 11–50 (every third one available, so the list of scenario 2 holds 21 pets) and
 * writes orders 1–50 (order n for pet ((n − 1) mod 10) + 1), through the REST API.
 */
export async function seedUpstream(petstoreUrl: string): Promise<void> {
  const post = async (path: string, payload: unknown) => {
    const response = await fetch(`${petstoreUrl}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: CREDENTIAL_HEADERS.authorization,
      },
      body: JSON.stringify(payload),
    });
    if (!response.ok) throw new Error(`seeding ${path} failed: ${response.status} ${await response.text()}`);
  };
  const statuses = ['available', 'pending', 'sold'];
  for (let id = 11; id <= 50; id += 1) {
    await post('/pet', {
      id,
      name: `Pet ${id}`,
      category: { id: 1, name: 'Dogs' },
      photoUrls: ['url1', 'url2'],
      tags: [
        { id: 1, name: 'tag1' },
        { id: 2, name: 'tag2' },
      ],
      status: statuses[(id - 11) % 3],
    });
  }
  for (const id of ORDER_IDS) {
    await post('/store/order', {
      id,
      petId: orderPetId(id),
      quantity: id,
      shipDate: '2025-01-01T00:00:00.000Z',
      status: 'placed',
      complete: false,
    });
  }
}

/** Pets the mixed workload reads and renames (issue 23): 1–100, of which 51–100 it adds itself. */
export const MIXED_PETS = 100;

/**
 * The mixed workload's cycle, which every connection sends in turn: 125 GraphQL bodies, 100 reads
 * (one of each pet 1–100, spread by a stride prime to 100) and 25 renames (20%), each after four
 * reads, of the pet read two places before it, so that its next read finds its kept answer dropped.
 * A rename gives the name the pet already has: the data stays the same run after run.
 */
export function mixedWorkload(): { body: string; update: boolean }[] {
  const cycle: { body: string; update: boolean }[] = [];
  const reads: number[] = [];
  for (let read = 0; read < MIXED_PETS; read += 1) {
    const id = ((read * 37) % MIXED_PETS) + 1;
    reads.push(id);
    cycle.push({ update: false, body: body(`query Pet { pet(id: ${id}) { id name status } }`) });
    if (read % 4 !== 3) continue;
    const renamed = reads[reads.length - 2] ?? id;
    cycle.push({
      update: true,
      body: body(`mutation Rename { updatePetWithForm(id: ${renamed}, name: "${mixedPetName(renamed)}") { id } }`),
    });
  }
  return cycle;
}

/** The name of pet `id` in the mixed workload: the emulator's seed for 1–10, the bench's for the others. */
function mixedPetName(id: number): string {
  return id <= 10 ? `Cat ${id}` : `Pet ${id}`;
}

/** Adds pets 51–100 (after {@link seedUpstream}'s), for the mixed workload's own upstream. */
export async function seedMixedPets(petstoreUrl: string): Promise<void> {
  for (let id = 51; id <= MIXED_PETS; id += 1) {
    const response = await fetch(`${petstoreUrl}/pet`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: CREDENTIAL_HEADERS.authorization,
      },
      body: JSON.stringify({ id, name: mixedPetName(id), photoUrls: [], tags: [], status: 'available' }),
    });
    if (!response.ok) throw new Error(`seeding pet ${id} failed: ${response.status} ${await response.text()}`);
  }
}
