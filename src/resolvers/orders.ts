/**
 * Orders: `Query.order`, `Mutation.placeOrder`, and the Order type with its pet.
 */
import type { Resolvers } from '../__generated__/resolvers-types.js';
import { incompleteAnswer } from '../errors.js';
import { int64Arg, orderPayload } from './inputs.js';

export const orderResolvers: Resolvers = {
  Order: {
    __resolveReference: async (reference, { loaders }) => loaders.orderById.load(int64Arg(reference.id, 'Order.id')),
    id: (order) => order.id ?? incompleteAnswer('petstore', 'Order.id'),
    // Many orders of one request share their pets' lookups through the loader.
    pet: (order, _, { loaders }) => (order.petId === undefined ? null : loaders.petById.load(order.petId)),
  },
  Query: {
    order: (_, { id }, { loaders }) => loaders.orderById.load(int64Arg(id, 'id')),
  },
  Mutation: {
    placeOrder: (_, { input }, { petstore }) => petstore.placeOrder(orderPayload(input)),
    deleteOrder: async (_, { id }, { petstore, loaders }) => {
      const orderId = int64Arg(id, 'id');
      await petstore.deleteOrder(orderId);
      loaders.orderById.clear(orderId);
      return true;
    },
  },
};
