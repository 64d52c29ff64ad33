/**
 * What each field costs the upstream: the one cost model of the gateway. `npm run explain`
 * (scripts/explain.ts) bounds the upstream calls of an operation from it without running it, and
 * runs its N+1 check; the gateway estimates each operation's calls from it before running it
 * (src/security/upstream-estimate.ts); and the subgraph SDL's `@cost` and `@listSize` directives,
 * which federated routers read, are derived from it (src/resolvers/cost-directives.ts).
 *
 * One entry per field whose resolver calls the upstream, written beside the resolvers it
 * describes: `test/explain-static.test.ts` reads each resolver and fails when one calls an area
 * function or a loader that its entry does not list (or has no entry). What each REST operation
 * is (method, path) is not written here: it is the operation's row of src/upstream/operations.ts.
 */
import type { Loaders } from '../loaders.js';
import type { OperationId } from '../upstream/operations.js';

/** A REST operation, by its operationId (its row of src/upstream/operations.ts, and its area function). */
export type RestOperation = OperationId;

/** The REST operation each request loader calls, once per distinct key (src/loaders.ts). */
export const LOADER_OPERATIONS = {
  petById: 'getPetById',
  orderById: 'getOrderById',
  userByName: 'getUserByName',
} as const satisfies Record<keyof Loaders, RestOperation>;

/** One kind of upstream call a field's resolver makes. */
export type FieldCall = {
  /** the REST operation; several when the call is one of them (federation's `_entities`, by type) */
  operation: RestOperation | readonly RestOperation[];
  /**
   * the request loader the call goes through: calls of one request for the same key are one
   * call (deduplicated), and the keys of one tick are fetched together (batched)
   */
  loader?: keyof Loaders | readonly (keyof Loaders)[];
  /** the list argument with one call per distinct value (`pets(ids:)`, `petsByStatus(status:)`) */
  eachOf?: string;
  /** made only in some cases (so at most once): why */
  onlyWhen?: string;
};

/**
 * The list argument whose length is the length of a field's answer (`pets(ids: [n])` answers n
 * pets), so that fields below it are counted n times.
 */
export type AnswerLength = { answerLengthOf: string };

/** A field's upstream calls, by `Type.field`. A field of another type than Query or Mutation is resolved per parent. */
export type FieldCosts = Readonly<Record<string, readonly FieldCall[]>>;

/** The gateway's fields that call the upstream. */
export const UPSTREAM_COSTS: FieldCosts = {
  'Query.pet': [{ operation: 'getPetById', loader: 'petById' }],
  'Query.pets': [{ operation: 'getPetById', loader: 'petById', eachOf: 'ids' }],
  'Query.petsByStatus': [{ operation: 'findPetsByStatus', eachOf: 'status' }],
  'Query.petsByTags': [{ operation: 'findPetsByTags', eachOf: 'tags' }],
  'Query.order': [{ operation: 'getOrderById', loader: 'orderById' }],
  'Query.user': [{ operation: 'getUserByName', loader: 'userByName' }],
  'Query.inventory': [{ operation: 'getInventory' }],
  // Federation: one representation per entity, each through its type's loader.
  'Query._entities': [
    {
      operation: ['getPetById', 'getOrderById', 'getUserByName'],
      loader: ['petById', 'orderById', 'userByName'],
      eachOf: 'representations',
    },
  ],
  'Order.pet': [{ operation: 'getPetById', loader: 'petById' }],
  'Pet.__resolveReference': [{ operation: 'getPetById', loader: 'petById' }],
  'Order.__resolveReference': [{ operation: 'getOrderById', loader: 'orderById' }],
  'User.__resolveReference': [{ operation: 'getUserByName', loader: 'userByName' }],
  'Mutation.addPet': [{ operation: 'addPet' }],
  'Mutation.updatePet': [{ operation: 'updatePet' }],
  'Mutation.updatePetWithForm': [
    { operation: 'updatePetWithForm' },
    { operation: 'getPetById', loader: 'petById', onlyWhen: 'the upstream answers without the pet' },
  ],
  'Mutation.deletePet': [{ operation: 'deletePet' }],
  'Mutation.uploadPetImage': [{ operation: 'uploadFile' }],
  'Mutation.placeOrder': [{ operation: 'placeOrder' }],
  'Mutation.deleteOrder': [{ operation: 'deleteOrder' }],
  'Mutation.createUser': [{ operation: 'createUser' }],
  'Mutation.createUsers': [{ operation: 'createUsersWithListInput' }],
  'Mutation.updateUser': [
    { operation: 'updateUser' },
    { operation: 'getUserByName', loader: 'userByName', onlyWhen: 'the upstream answers without the user' },
  ],
  'Mutation.deleteUser': [{ operation: 'deleteUser' }],
  'Mutation.createPlant': [{ operation: 'createPlant' }],
};

/** Fields whose answer has one item per value of a list argument (`pets(ids:)`: one pet, or null, per id). */
export const ANSWER_LENGTHS: Readonly<Record<string, AnswerLength>> = {
  'Query.pets': { answerLengthOf: 'ids' },
  'Query._entities': { answerLengthOf: 'representations' },
};

/**
 * How many items a list field is assumed to answer with where its length is no argument's, or
 * where a router cannot read it from one (the `@listSize(assumedSize:)` routers read): the
 * gateway's estimate multiplies the calls of the fields below such a list by it.
 */
export const ASSUMED_LIST_SIZES: Readonly<Record<string, number>> = {
  // One pet per id: at most LIST_ARGUMENT_MAX_ITEMS' default ids (a router cannot count a list argument).
  'Query.pets': 100,
  // Only the upstream knows how many pets a status or a tag has.
  'Query.petsByStatus': 100,
  'Query.petsByTags': 100,
};

/** The size assumed of a list answer that neither an argument nor {@link ASSUMED_LIST_SIZES} gives. */
export const DEFAULT_ASSUMED_LIST_SIZE = 100;
