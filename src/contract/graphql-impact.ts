/**
 * What each REST operation feeds in the graph: which GraphQL fields call it, which GraphQL type
 * its answer becomes, which input type its body is written from, which arguments its parameters
 * come from and which credential it sends. The upstream check (`openapi-diff.ts`) reads it to
 * say, for each difference between an upstream's document and the gateway's, what it does to the
 * graph.
 *
 * The tables are keyed by the operations of `src/upstream/petstore.ts` and `plants.ts` (the
 * functions are named by operationId): the compiler refuses a table that misses an operation or
 * names one that does not exist, and `test/contract-impact.test.ts` checks every GraphQL
 * coordinate against the executable schema and the resolvers. Which fields of a payload are used
 * is not listed: a property is used when the GraphQL type it maps to has a field of its name.
 */
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLSchema,
  type GraphQLType,
} from 'graphql';
import type { Security } from '../credentials.js';
import type { PetstoreApi } from '../upstream/petstore.js';
import type { PlantsApi } from '../upstream/plants.js';

/** A parameter the gateway sends, and the GraphQL arguments (`Query.pet(id:)`) its value comes from. */
export type ParameterUse = {
  from: readonly string[];
  /** sent on every call (a path parameter, a required argument); otherwise only when the argument is given */
  always: boolean;
  /** a list parameter to which the gateway gives exactly one value per call, so its style does not matter */
  oneValue?: boolean;
};

/** How the gateway uses one REST operation. */
export type OperationUse = {
  /** the GraphQL fields whose resolvers make the call (`Query.pet`, `Order.pet`) */
  fields: readonly string[];
  /** the GraphQL type the answer becomes; absent when the answer's body is not read */
  answer?: string;
  /** for an answer that is a map (`Inventory`): the GraphQL field each of its values becomes */
  mapValues?: string;
  /** the GraphQL input type the body is written from; absent when the call has no body */
  body?: string;
  /**
   * the media type the body is always sent in; absent for the bodies that follow
   * PETSTORE_BODY_FORMAT (JSON unless set otherwise)
   */
  bodyMediaType?: string;
  /** the parameters the gateway sends, by name in the gateway's document */
  parameters: Readonly<Record<string, ParameterUse>>;
  /** the credential sent (see `credentialHeaders`) */
  security: Security;
};

// `Query._entities`: a federated router asking this subgraph for pets and users by key.
const PET_READERS = ['Query.pet', 'Query.pets', 'Order.pet', 'Query._entities'];
const petId = (argument: string, always = true): ParameterUse => ({ from: [argument], always });

/** The pet store's operations, as `src/upstream/petstore.ts` makes them and the resolvers call them. */
export const PETSTORE_USES: { readonly [K in keyof PetstoreApi]: OperationUse } = {
  addPet: { fields: ['Mutation.addPet'], answer: 'Pet', body: 'PetInput', parameters: {}, security: 'bearer' },
  updatePet: { fields: ['Mutation.updatePet'], answer: 'Pet', body: 'PetInput', parameters: {}, security: 'bearer' },
  findPetsByStatus: {
    fields: ['Query.petsByStatus'],
    answer: 'Pet',
    parameters: { status: { from: ['Query.petsByStatus(status:)'], always: true, oneValue: true } },
    security: 'bearer',
  },
  findPetsByTags: {
    fields: ['Query.petsByTags'],
    answer: 'Pet',
    parameters: { tags: { from: ['Query.petsByTags(tags:)'], always: true, oneValue: true } },
    security: 'bearer',
  },
  getPetById: {
    fields: PET_READERS,
    answer: 'Pet',
    parameters: { petId: { from: ['Query.pet(id:)', 'Query.pets(ids:)', 'Order.pet'], always: true } },
    security: 'apiKeyOrBearer',
  },
  updatePetWithForm: {
    fields: ['Mutation.updatePetWithForm'],
    answer: 'Pet',
    parameters: {
      petId: petId('Mutation.updatePetWithForm(id:)'),
      name: petId('Mutation.updatePetWithForm(name:)', false),
      status: petId('Mutation.updatePetWithForm(status:)', false),
    },
    security: 'bearer',
  },
  deletePet: {
    fields: ['Mutation.deletePet'],
    parameters: { petId: petId('Mutation.deletePet(id:)') },
    security: 'bearer',
  },
  uploadFile: {
    fields: ['Mutation.uploadPetImage'],
    answer: 'ApiResponse',
    bodyMediaType: 'application/octet-stream',
    parameters: {
      petId: petId('Mutation.uploadPetImage(petId:)'),
      additionalMetadata: petId('Mutation.uploadPetImage(additionalMetadata:)', false),
    },
    security: 'bearer',
  },
  getInventory: {
    fields: ['Query.inventory'],
    answer: 'Inventory',
    mapValues: 'InventoryEntry.quantity',
    parameters: {},
    security: 'apiKey',
  },
  placeOrder: {
    fields: ['Mutation.placeOrder'],
    answer: 'Order',
    body: 'OrderInput',
    parameters: {},
    security: 'none',
  },
  getOrderById: {
    fields: ['Query.order'],
    answer: 'Order',
    parameters: { orderId: petId('Query.order(id:)') },
    security: 'none',
  },
  deleteOrder: {
    fields: ['Mutation.deleteOrder'],
    parameters: { orderId: petId('Mutation.deleteOrder(id:)') },
    security: 'none',
  },
  createUser: { fields: ['Mutation.createUser'], answer: 'User', body: 'UserInput', parameters: {}, security: 'none' },
  createUsersWithListInput: {
    fields: ['Mutation.createUsers'],
    answer: 'User',
    body: 'UserInput',
    bodyMediaType: 'application/json',
    parameters: {},
    security: 'none',
  },
  getUserByName: {
    fields: ['Query.user', 'Query._entities'],
    answer: 'User',
    parameters: { username: petId('Query.user(username:)') },
    security: 'none',
  },
  updateUser: {
    fields: ['Mutation.updateUser'],
    answer: 'User',
    body: 'UserInput',
    parameters: { username: petId('Mutation.updateUser(username:)') },
    security: 'none',
  },
  deleteUser: {
    fields: ['Mutation.deleteUser'],
    parameters: { username: petId('Mutation.deleteUser(username:)') },
    security: 'none',
  },
};

/** The plant area's operations, as `src/upstream/plants.ts` makes them. */
export const PLANTS_USES: { readonly [K in keyof PlantsApi]: OperationUse } = {
  createPlant: {
    fields: ['Mutation.createPlant'],
    answer: 'Plant',
    body: 'NewPlantInput',
    bodyMediaType: 'application/json',
    parameters: {},
    security: 'bearer',
  },
};

/** The REST areas, each described by one document of `schema/`. */
export type Area = 'petstore' | 'plants';

/** The operations the gateway uses in an area, by operationId. */
export function usesOf(area: Area): Readonly<Record<string, OperationUse>> {
  return area === 'petstore' ? PETSTORE_USES : PLANTS_USES;
}

/** A place in the graph a REST value feeds: a field of an output type or of an input type (or a root type). */
export type GraphPlace = {
  /** `Pet.status`, `PetInput.status`, `Query.pet(id:)`, or the type's name at the root of an answer */
  coordinate: string;
  type: GraphQLType;
};

/** How a graph place is described in a message: `Pet.status` (enum PetStatus). */
export function describePlace(place: GraphPlace): string {
  const named = getNamedType(place.type);
  const kind = isEnumType(named) ? `enum ${named.name}` : String(place.type);
  return `\`${place.coordinate}\` (${kind})`;
}

/** Whether a place can hold no value (null) in the graph. */
export function isNullable(place: GraphPlace): boolean {
  return !isNonNullType(place.type);
}

/** The values a GraphQL enum place accepts, as the REST values they stand for (their internal values). */
export function enumValues(place: GraphPlace): Set<string> | undefined {
  const named = getNamedType(place.type);
  if (!isEnumType(named)) return undefined;
  return new Set(named.getValues().map((value) => String(value.value)));
}

/** The place a named type stands at, as the root of an answer or body. */
export function rootPlace(schema: GraphQLSchema, typeName: string): GraphPlace | undefined {
  const type = schema.getType(typeName);
  return type === undefined ? undefined : { coordinate: typeName, type };
}

/** The field `name` of the object or input type at `place`, if it has one. */
export function fieldPlace(place: GraphPlace, name: string): GraphPlace | undefined {
  const named = getNamedType(place.type);
  if (!isObjectType(named) && !isInputObjectType(named)) return undefined;
  const field: GraphQLField<unknown, unknown> | GraphQLInputField | undefined = named.getFields()[name];
  return field === undefined ? undefined : { coordinate: `${named.name}.${name}`, type: field.type };
}

/** The place of the items of a list place (the same place when it is not a list). */
export function itemPlace(place: GraphPlace): GraphPlace {
  const type = isNonNullType(place.type) ? place.type.ofType : place.type;
  return isListType(type) ? { coordinate: place.coordinate, type: type.ofType as GraphQLType } : place;
}

/** The place of a GraphQL coordinate: `Type.field`, or an argument `Type.field(name:)`. */
export function coordinatePlace(schema: GraphQLSchema, coordinate: string): GraphPlace | undefined {
  const match = /^(\w+)\.(\w+)(?:\((\w+):\))?$/.exec(coordinate);
  if (match === null) return undefined;
  const [, typeName = '', fieldName = '', argumentName] = match;
  const type = schema.getType(typeName);
  if (!isObjectType(type) && !isInputObjectType(type)) return undefined;
  const field = type.getFields()[fieldName];
  if (field === undefined) return undefined;
  if (argumentName === undefined) return { coordinate, type: field.type };
  const argument = 'args' in field ? field.args.find((each) => each.name === argumentName) : undefined;
  return argument === undefined ? undefined : { coordinate, type: argument.type };
}
