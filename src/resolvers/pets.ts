/**
 * Pets: `Query.pet/pets/petsByStatus/petsByTags`, the pet mutations, and the Pet type.
 */
import type { Resolvers } from '../__generated__/resolvers-types.js';
import { primePets } from '../loaders.js';
import { incompleteAnswer } from '../errors.js';
import { PetStatus, type PetPayload } from '../upstream/payloads.js';
import { int64Arg, petPayload } from './inputs.js';

const missing = (field: string) => incompleteAnswer('petstore', field);

const STATUSES: ReadonlySet<string> = new Set(Object.values(PetStatus));
const isPetStatus = (value: string | undefined): value is PetStatus => value !== undefined && STATUSES.has(value);

/** Pets read back after a change are primed, so a later lookup in the same request sees the new state. */
function primed(loaders: Parameters<typeof primePets>[0], pet: PetPayload): PetPayload {
  primePets(loaders, [pet]);
  return pet;
}

export const petResolvers: Resolvers = {
  PetStatus,

  Pet: {
    // Federation: a router asks for pets by key; they go through the request's loader, so
    // representations of one pet are fetched once and different pets concurrently. Async, so a
    // bad key fails its own entity, not the whole _entities list.
    __resolveReference: async (reference, { loaders }) => loaders.petById.load(int64Arg(reference.id, 'Pet.id')),
    id: (pet) => pet.id ?? missing('Pet.id'),
    photoUrls: (pet) => pet.photoUrls ?? [],
    tags: (pet) => pet.tags ?? [],
    // A status outside the enum (the reference server does not check) reads as null.
    status: (pet) => (isPetStatus(pet.status) ? pet.status : null),
  },

  Query: {
    pet: (_, { id }, { loaders }) => loaders.petById.load(int64Arg(id, 'id')),
    pets: (_, { ids }, { loaders }) => loaders.petById.loadMany(ids.map((id, index) => int64Arg(id, `ids[${index}]`))),
    petsByStatus: async (_, { status }, { petstore, credentials, loaders }) => {
      const pets = await petstore.findPetsByStatus(credentials, status);
      primePets(loaders, pets);
      return pets;
    },
    petsByTags: async (_, { tags }, { petstore, credentials, loaders }) => {
      const pets = await petstore.findPetsByTags(credentials, tags);
      primePets(loaders, pets);
      return pets;
    },
  },

  Mutation: {
    addPet: async (_, { input }, { petstore, credentials, loaders }) =>
      primed(loaders, await petstore.addPet(credentials, petPayload(input))),
    updatePet: async (_, { id, input }, { petstore, credentials, loaders }) =>
      primed(loaders, await petstore.updatePet(credentials, petPayload(input, int64Arg(id, 'id')))),
    updatePetWithForm: async (_, { id, name, status }, { petstore, credentials, loaders }) => {
      const petId = int64Arg(id, 'id');
      const updated = await petstore.updatePetWithForm(credentials, petId, {
        name: name ?? undefined,
        status: status ?? undefined,
      });
      // Servers that answer without a body: read the pet back.
      return updated
        ? primed(loaders, updated)
        : ((await loaders.petById.clear(petId).load(petId)) ?? missing('updatePetWithForm result'));
    },
    deletePet: async (_, { id }, { petstore, credentials, loaders }) => {
      const petId = int64Arg(id, 'id');
      await petstore.deletePet(credentials, petId);
      loaders.petById.clear(petId);
      return true;
    },
    uploadPetImage: async (_, { petId, file, additionalMetadata }, { petstore, credentials }) => {
      const id = int64Arg(petId, 'petId');
      return petstore.uploadFile(credentials, id, await file.stream(), additionalMetadata ?? undefined);
    },
  },
};
