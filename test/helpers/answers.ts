/**
 * What tests read of an answer, in one place: the errors of a GraphQL answer as a test compares
 * them, and a gateway's /readiness.
 */
import type { GraphQLResponse } from './stack.js';

/** Each error of a result, without its locations: message, path and extensions. */
export function errorsOf(result: GraphQLResponse) {
  return result.errors?.map(({ message, path, extensions }) => ({ message, path, extensions }));
}

/** The extensions of each error of a result. */
export function extensionsOf(result: GraphQLResponse) {
  return result.errors?.map((error) => error.extensions);
}

/** A gateway's `/readiness` answer: its status, and its body. */
export type Readiness = {
  status: number;
  body: { status?: string; upstreams: Record<string, unknown>; [key: string]: unknown };
};

/** `GET /readiness` of the gateway at `origin`. */
export async function readinessOf(origin: string): Promise<Readiness> {
  const response = await fetch(`${origin}/readiness`);
  return { status: response.status, body: (await response.json()) as Readiness['body'] };
}

/** What the shipped `GetPet` operation (schema/mcp/) answers for pet 1 of the emulator's seed, as a tool's structured content. */
export const GET_PET_1 = {
  pet: {
    id: '1',
    name: 'Cat 1',
    status: 'AVAILABLE',
    category: { id: '2', name: 'Cats' },
    tags: [
      { id: '1', name: 'tag1' },
      { id: '2', name: 'tag2' },
    ],
    photoUrls: ['url1', 'url2'],
  },
};

/** What the shipped `GetInventory` operation answers on the emulator's seed, as a tool's structured content. */
export const GET_INVENTORY = {
  inventory: {
    entries: [
      { status: 'approved', quantity: 50 },
      { status: 'delivered', quantity: 50 },
      { status: 'placed', quantity: 100 },
    ],
  },
};

/** The tools the gateway ships (schema/mcp/), queries only, as `tools/list` names them, sorted. */
export const DEFAULT_TOOLS = ['FindPetsByStatus', 'GetInventory', 'GetOrder', 'GetPet', 'GetUser'];
