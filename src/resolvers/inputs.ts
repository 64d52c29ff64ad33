/**
 * Graph input → upstream payload, validated before any upstream call: ids must be int64
 * (they go into paths and JSON integers), path keys must not be empty.
 */
import { badUserInput } from '../errors.js';
import type { OrderInput, PetInput, UserInput } from '../__generated__/resolvers-types.js';
import { toInt64 } from '../upstream/codec.js';
import type { NewUserPayload, OrderPayload, PetPayload } from '../upstream/payloads.js';

/** The canonical int64 form of an id argument. @throws BAD_USER_INPUT naming the argument */
export function int64Arg(value: string, name: string): string {
  const id = toInt64(value);
  if (id === undefined)
    throw badUserInput(
      `${name} must be an integer from -9223372036854775808 to 9223372036854775807, got "${value.slice(0, 40)}"`,
    );
  return id;
}

function optionalInt64(value: string | null | undefined, name: string): string | undefined {
  return value === null || value === undefined ? undefined : int64Arg(value, name);
}

/** A non-empty path key such as a user name. @throws BAD_USER_INPUT naming the argument */
export function keyArg(value: string, name: string): string {
  if (value === '') throw badUserInput(`${name} must not be empty`);
  return value;
}

/** A pet payload from `PetInput`; `id` (from `updatePet`'s argument) wins over `input.id` and must agree with it. */
export function petPayload(input: PetInput, id?: string): PetPayload {
  const inputId = optionalInt64(input.id, 'input.id');
  if (id !== undefined && inputId !== undefined && inputId !== id)
    throw badUserInput(`input.id (${inputId}) differs from id (${id})`);
  return {
    id: id ?? inputId,
    name: input.name,
    photoUrls: input.photoUrls ?? [],
    category: input.category
      ? { id: optionalInt64(input.category.id, 'input.category.id'), name: input.category.name ?? undefined }
      : undefined,
    tags: (input.tags ?? []).map((tag, index) => ({
      id: optionalInt64(tag.id, `input.tags[${index}].id`),
      name: tag.name ?? undefined,
    })),
    status: input.status ?? undefined,
  };
}

/** An order payload from `OrderInput`. */
export function orderPayload(input: OrderInput): OrderPayload {
  return {
    id: optionalInt64(input.id, 'input.id'),
    petId: optionalInt64(input.petId, 'input.petId'),
    quantity: input.quantity ?? undefined,
    shipDate: input.shipDate ?? undefined,
    status: input.status ?? undefined,
    complete: input.complete ?? undefined,
  };
}

/** A user payload from `UserInput` (the password goes upstream; it never comes back out). */
export function userPayload(input: UserInput, name = 'input'): NewUserPayload {
  return {
    id: optionalInt64(input.id, `${name}.id`),
    username: keyArg(input.username, `${name}.username`),
    firstName: input.firstName ?? undefined,
    lastName: input.lastName ?? undefined,
    email: input.email ?? undefined,
    password: input.password ?? undefined,
    phone: input.phone ?? undefined,
    userStatus: input.userStatus ?? undefined,
  };
}
