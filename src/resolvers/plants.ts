/**
 * Plants: `Mutation.createPlant`.
 */
import type { Resolvers } from '../__generated__/resolvers-types.js';
import { incompleteAnswer } from '../errors.js';
import { int64Arg } from './inputs.js';

export const plantResolvers: Resolvers = {
  Plant: {
    name: (plant) => plant.name ?? incompleteAnswer('plants', 'Plant.name'),
  },
  Mutation: {
    createPlant: (_, { input }, { plants, credentials }) =>
      plants.createPlant(credentials, {
        id: int64Arg(input.id, 'input.id'),
        name: input.name,
        tag: input.tag ?? undefined,
      }),
  },
};
