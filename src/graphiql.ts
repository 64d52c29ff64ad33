/**
 * GraphiQL as a newcomer first sees it: one tab per area with operations that run as they
 * are (pets, orders, inventory, users, plants, and an upload, which needs a multipart client),
 * and, on the embedded emulator only, demo credentials in the headers tab, so that the first
 * query succeeds. With real upstreams nothing is prefilled: a credential is the user's to give.
 */
import type { GraphiQLOptions } from 'graphql-yoga';

/** The credentials prefilled on the embedded emulator, which accepts any non-empty credential. */
export const DEMO_HEADERS = { Authorization: 'Bearer demo', api_key: 'demo' };

type Tab = { query: string; variables?: string };

/** The example operations, one tab per area; the first one runs with the ▶ button as it is. */
export const EXAMPLE_TABS: readonly Tab[] = [
  {
    query: `# Pets: one by id, and by status or by tag.
# Press ▶ (or Ctrl-Enter) to run. The pet store wants a
# credential for these: see the Headers tab below.
query Pets {
  pet(id: 1) {
    id
    name
    status
    category { name }
    tags { name }
  }
  petsByStatus(status: [PENDING]) {
    id
    name
  }
  petsByTags(tags: ["tag4"]) {
    id
    name
    tags { name }
  }
}
`,
  },
  {
    query: `# Orders: an order with its pet (GET /store/order/{id},
# then GET /pet/{petId}). Placing one is a mutation: pick
# it in the menu of the ▶ button.
query Order {
  order(id: 1) {
    id
    quantity
    status
    shipDate
    pet { id name }
  }
}

mutation PlaceOrder($input: OrderInput!) {
  placeOrder(input: $input) {
    id
    petId
    quantity
    status
  }
}
`,
    variables: JSON.stringify({ input: { petId: '1', quantity: 2, shipDate: '2030-01-01T10:00:00Z', status: 'placed' } }, null, 2),
  },
  {
    query: `# Inventory: quantities by status
# (GET /store/inventory, needs the api_key header).
query Inventory {
  inventory {
    entries {
      status
      quantity
    }
  }
}
`,
  },
  {
    query: `# Users: look one up, or create one (its password
# goes upstream, and never comes back).
query User {
  user(username: "user1") {
    id
    username
    firstName
    email
  }
}

mutation CreateUser($input: UserInput!) {
  createUser(input: $input) {
    id
    username
    email
  }
}
`,
    variables: JSON.stringify({ input: { username: 'newcomer', firstName: 'New', email: 'newcomer@example.com', password: 'choose-one' } }, null, 2),
  },
  {
    query: `# Plants: POST {PLANTS_URL}/plants, with the caller's
# bearer token.
mutation CreatePlant {
  createPlant(input: { id: 1, name: "Fern", tag: "indoor" }) {
    name
    tag
  }
}
`,
  },
  {
    query: `# Upload: an image of a pet, sent as a GraphQL multipart
# request (github.com/jaydenseric/graphql-multipart-request-spec).
# GraphiQL cannot attach files; from a shell, with the
# gateway on localhost:4000 and a photo.jpg:
#
#   curl http://localhost:4000/graphql \\
#     -H 'Authorization: Bearer TOKEN' -H 'x-graphql-csrf: 1' \\
#     -F operations='{"query":"mutation Upload($file: File!) { uploadPetImage(petId: 1, file: $file, additionalMetadata: \\"front\\") { code type message } }","variables":{"file":null}}' \\
#     -F map='{"0":["variables.file"]}' \\
#     -F 0=@photo.jpg
mutation Upload($file: File!) {
  uploadPetImage(petId: 1, file: $file, additionalMetadata: "front") {
    code
    type
    message
  }
}
`,
  },
];

/**
 * GraphiQL's options: the example tabs, with the demo credentials in each tab's headers when
 * the upstreams are the embedded emulator (and only then).
 */
export function graphiqlOptions(upstreams: { emulator: boolean }): GraphiQLOptions {
  const headers = upstreams.emulator ? JSON.stringify(DEMO_HEADERS, null, 2) : undefined;
  // The curl command of the upload tab: with the demo token on the emulator, a placeholder otherwise.
  const token = upstreams.emulator ? 'demo' : '<your token>';
  return {
    title: 'Pet store GraphQL gateway',
    defaultTabs: EXAMPLE_TABS.map((tab) => ({ query: tab.query.replace('Bearer TOKEN', `Bearer ${token}`), variables: tab.variables ?? null, headers: headers ?? null })),
    // New tabs get the same headers; with real upstreams, the user types their own.
    ...(headers ? { defaultHeaders: headers } : {}),
    // A user's own credentials are not written to the browser's storage; the demo ones may be.
    shouldPersistHeaders: upstreams.emulator,
  };
}
