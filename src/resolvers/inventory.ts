/**
 * Inventory: `Query.inventory`, the upstream's status → quantity map as a list of entries.
 */
import type { Resolvers } from '../__generated__/resolvers-types.js';

export const inventoryResolvers: Resolvers = {
  Inventory: {
    // The upstream map has no meaningful order (the reference server's is a HashMap's); sorted, it is stable.
    entries: (inventory) =>
      Object.entries(inventory)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([status, quantity]) => ({ status, quantity })),
  },
  Query: {
    inventory: (_, __, { petstore, credentials }) => petstore.getInventory(credentials),
  },
};
