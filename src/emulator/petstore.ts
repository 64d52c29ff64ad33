/**
 * Pet store operations (pets, orders, inventory, users), relative to /api/v3.
 *
 * Behaviour follows the interface document; where it is silent the emulator
 * answers like the public reference server, except where that server is
 * plainly broken (500s on a missing id, a single status value only), since
 * the gateway is tested against the emulator's answers.
 */
import { apiError, emptyReply, jsonReply, mediaTypeOf, textReply } from './http.js';
import type { Reply, RequestContext, Route } from './http.js';
import {
  listReply,
  orderRepresentation,
  petRepresentation,
  readOrderBody,
  readPetBody,
  readUserBody,
  readUserListBody,
  recordReply,
  userRepresentation,
} from './models.js';
import type { PetInput, UserInput } from './models.js';
import { PET_STATUSES } from './store.js';
import type { Order, Pet, User } from './store.js';
import { parseInt64Param, toJson } from './wire.js';

function isPetStatus(value: string): boolean {
  return PET_STATUSES.some((status) => status === value);
}

function statusNotAllowed(value: string): Error {
  // The missing backtick after `status` is how the upstream words it.
  return apiError(
    400,
    `Input error: query parameter \`status value \`${value}\` is not in the allowable values ` +
      `\`[${PET_STATUSES.join(', ')}]\``,
  );
}

/**
 * All values of a list query parameter, accepting both the repeated form
 * (`tags=a&tags=b`, the upstream's) and the comma-separated form (the
 * interface document's). Empty items are dropped.
 */
function listParam(query: URLSearchParams, name: string): string[] {
  return query
    .getAll(name)
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter((value) => value !== '');
}

function requirePet(context: RequestContext, id: string): Pet {
  const pet = context.store.findPet(id);
  if (pet === undefined) throw apiError(404, 'Pet not found');
  return pet;
}

function completePet(input: PetInput, id: string): Pet {
  if (input.name === undefined || input.name === '') throw apiError(400, 'Input error: name is required');
  return { ...input, id, name: input.name };
}

function addPet(context: RequestContext): Reply {
  const input = readPetBody(context);
  if (input === undefined) throw apiError(400, 'No Pet provided. Try again?');
  // The upstream fails with a 500 on a pet without id; handing out the next id is what a client expects.
  const pet = completePet(input, input.id ?? context.store.nextPetId());
  context.store.savePet(pet);
  return recordReply(context, petRepresentation, pet);
}

function updatePet(context: RequestContext): Reply {
  const input = readPetBody(context);
  if (input === undefined) throw apiError(400, 'No Pet provided. Try again?');
  if (input.id === undefined) throw apiError(400, 'Input error: id is required');
  requirePet(context, input.id);
  // Replaces the whole pet: fields missing from the body are dropped, not merged.
  const pet = completePet(input, input.id);
  context.store.savePet(pet);
  return recordReply(context, petRepresentation, pet);
}

function findPetsByStatus(context: RequestContext): Reply {
  const statuses = listParam(context.query, 'status');
  if (statuses.length === 0) throw apiError(400, 'No status provided. Try again?');
  const invalid = statuses.find((status) => !isPetStatus(status));
  if (invalid !== undefined) throw statusNotAllowed(invalid);
  const wanted = new Set(statuses);
  const pets = context.store.pets.filter((pet) => pet.status !== undefined && wanted.has(pet.status));
  return listReply(context, petRepresentation, pets);
}

function findPetsByTags(context: RequestContext): Reply {
  const tags = listParam(context.query, 'tags');
  if (tags.length === 0) throw apiError(400, 'No tags provided. Try again?');
  const wanted = new Set(tags);
  // Each pet appears once even when several of its tags match (the upstream repeats it).
  const pets = context.store.pets.filter((pet) =>
    pet.tags.some((tag) => tag.name !== undefined && wanted.has(tag.name)),
  );
  return listReply(context, petRepresentation, pets);
}

function getPetById(context: RequestContext): Reply {
  const pet = requirePet(context, parseInt64Param(context.params.petId ?? ''));
  return recordReply(context, petRepresentation, pet);
}

function updatePetWithForm(context: RequestContext): Reply {
  const id = parseInt64Param(context.params.petId ?? '');
  const name = context.query.get('name') ?? '';
  const status = context.query.get('status') ?? '';
  // The enum check is a parameter check, so it answers before the pet lookup.
  if (status !== '' && !isPetStatus(status)) throw statusNotAllowed(status);
  const pet: Pet = { ...requirePet(context, id) };
  if (name !== '') pet.name = name;
  if (status !== '') pet.status = status;
  context.store.savePet(pet);
  return recordReply(context, petRepresentation, pet);
}

function deletePet(context: RequestContext): Reply {
  const id = parseInt64Param(context.params.petId ?? '');
  // Unknown ids also answer 200, as upstream.
  context.store.deletePet(id);
  return textReply('Pet deleted');
}

function uploadFile(context: RequestContext): Reply {
  const id = parseInt64Param(context.params.petId ?? '');
  const contentType = context.headers['content-type'];
  // Only raw bytes are accepted; a multipart upload gets 415 as it does upstream.
  const sentSomething = context.body.length > 0 || contentType !== undefined;
  if (sentSomething && mediaTypeOf(contentType) !== 'application/octet-stream') {
    throw apiError(415, 'HTTP 415 Unsupported Media Type');
  }
  if (context.body.length === 0) throw apiError(400, 'No file uploaded');
  const existing = requirePet(context, id);
  // A stable, per-pet numbered URL instead of the upstream's temp-file path, so tests can predict it.
  const prefix = `upload://${id}/`;
  const sequence = existing.photoUrls.filter((url) => url.startsWith(prefix)).length + 1;
  context.store.savePet({ ...existing, photoUrls: [...existing.photoUrls, `${prefix}${sequence}`] });
  const metadata = context.query.get('additionalMetadata') ?? '';
  return jsonReply(
    toJson({
      code: 200,
      type: 'unknown',
      message: `additionalMetadata: ${metadata}\nFile uploaded, ${context.body.length} bytes`,
    }),
  );
}

function getInventory(context: RequestContext): Reply {
  // Inventory counts orders, not pets: quantities summed per order status.
  const inventory: Record<string, number> = {};
  for (const order of context.store.orders) {
    if (order.status === undefined) continue;
    inventory[order.status] = (inventory[order.status] ?? 0) + (order.quantity ?? 0);
  }
  return jsonReply(toJson(inventory));
}

function placeOrder(context: RequestContext): Reply {
  const input = readOrderBody(context);
  if (input === undefined) throw apiError(400, 'No Order provided. Try again?');
  const order: Order = { ...input, id: input.id ?? context.store.nextOrderId() };
  context.store.saveOrder(order);
  return recordReply(context, orderRepresentation, order);
}

function getOrderById(context: RequestContext): Reply {
  const order = context.store.findOrder(parseInt64Param(context.params.orderId ?? ''));
  if (order === undefined) throw apiError(404, 'Order not found');
  return recordReply(context, orderRepresentation, order);
}

function deleteOrder(context: RequestContext): Reply {
  context.store.deleteOrder(parseInt64Param(context.params.orderId ?? ''));
  return emptyReply();
}

/** A user needs a username: it is the key of every later lookup. */
function completeUser(input: UserInput, fallbackUsername?: string): User {
  const username = input.username === undefined || input.username === '' ? fallbackUsername : input.username;
  if (username === undefined) throw apiError(400, 'Input error: username is required');
  return { ...input, username };
}

function createUser(context: RequestContext): Reply {
  const input = readUserBody(context);
  if (input === undefined) throw apiError(400, 'No User provided. Try again?');
  const user = completeUser(input);
  context.store.saveUser(user);
  return recordReply(context, userRepresentation, user);
}

function createUsersWithListInput(context: RequestContext): Reply {
  const inputs = readUserListBody(context);
  if (inputs === undefined || inputs.length === 0) throw apiError(400, 'No User provided. Try again?');
  // Validate every user before storing any, so a bad item leaves the store unchanged.
  const users = inputs.map((input) => completeUser(input));
  for (const user of users) context.store.saveUser(user);
  // The interface document promises one User object; the last one created is returned.
  const last = users[users.length - 1];
  if (last === undefined) throw apiError(400, 'No User provided. Try again?');
  return recordReply(context, userRepresentation, last);
}

function pathUsername(context: RequestContext): string {
  return context.params.username ?? '';
}

function getUserByName(context: RequestContext): Reply {
  const user = context.store.findUser(pathUsername(context));
  if (user === undefined) throw apiError(404, 'User not found');
  return recordReply(context, userRepresentation, user);
}

function updateUser(context: RequestContext): Reply {
  const username = pathUsername(context);
  const input = readUserBody(context);
  if (context.store.findUser(username) === undefined) throw apiError(404, 'User not found');
  if (input === undefined) throw apiError(400, 'No User provided. Try again?');
  // The body's username wins (a rename); without one the user keeps the path's name.
  context.store.saveUser(completeUser(input, username), username);
  // The interface declares no response body for this operation.
  return emptyReply();
}

function deleteUser(context: RequestContext): Reply {
  context.store.deleteUser(pathUsername(context));
  return emptyReply();
}

/**
 * The pet store's routes, relative to /api/v3. Literal paths come before
 * templates so `/pet/findByStatus` is never read as a pet id.
 */
export const petstoreRoutes: Route[] = [
  {
    path: '/pet',
    operations: {
      POST: { handle: addPet },
      PUT: { handle: updatePet },
    },
  },
  { path: '/pet/findByStatus', operations: { GET: { handle: findPetsByStatus } } },
  { path: '/pet/findByTags', operations: { GET: { handle: findPetsByTags } } },
  {
    path: '/pet/{petId}',
    operations: {
      GET: { handle: getPetById },
      POST: { handle: updatePetWithForm },
      DELETE: { handle: deletePet },
    },
  },
  { path: '/pet/{petId}/uploadImage', operations: { POST: { handle: uploadFile } } },
  { path: '/store/inventory', operations: { GET: { handle: getInventory } } },
  { path: '/store/order', operations: { POST: { handle: placeOrder } } },
  {
    path: '/store/order/{orderId}',
    operations: {
      GET: { handle: getOrderById },
      DELETE: { handle: deleteOrder },
    },
  },
  { path: '/user', operations: { POST: { handle: createUser } } },
  { path: '/user/createWithList', operations: { POST: { handle: createUsersWithListInput } } },
  {
    path: '/user/{username}',
    operations: {
      GET: { handle: getUserByName },
      PUT: { handle: updateUser },
      DELETE: { handle: deleteUser },
    },
  },
];
