/**
 * The pet store's records on the wire: reading Pet, Order and User from any
 * accepted body format, and writing them as JSON or XML in the upstream's
 * field order and element names.
 */
import { apiError, jsonReply, wantsXml, xmlReply } from './http.js';
import type { Reply, RequestContext } from './http.js';
import type { Category, Order, Pet, Tag, User } from './store.js';
import {
  decodeBody,
  field,
  int64,
  isRecord,
  readBoolean,
  readDateTime,
  readInt32,
  readInt64,
  readList,
  readString,
  toJson,
  toXml,
  UnreadableBody,
} from './wire.js';
import type { BodyFormat, XmlNode } from './wire.js';

/** A Pet as a client sent it: the id may be left to the server, and the name is checked by the handler. */
export type PetInput = Omit<Pet, 'id' | 'name'> & { id?: string; name?: string };
/** An Order as sent; the server assigns a missing id. */
export type OrderInput = Omit<Order, 'id'> & { id?: string };
/** A User as sent; the handler decides what a missing username means. */
export type UserInput = Omit<User, 'username'> & { username?: string };

/** Body formats of the operations marked J/X/F in the interface document. */
const ANY_FORMAT: readonly BodyFormat[] = ['json', 'xml', 'form'];
/** Body format of the operations marked J. */
const JSON_ONLY: readonly BodyFormat[] = ['json'];

type RecordName = 'Pet' | 'Order' | 'User';

function unconvertible(recordName: RecordName): Error {
  return apiError(400, `Input error: unable to convert input to ${recordName}`);
}

/** `T` with every property that may be undefined turned into an optional property that is never undefined. */
type Defined<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/** Copies only the defined entries, so absent fields are omitted from JSON and XML alike. */
function defined<T extends Record<string, unknown>>(record: T): Defined<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (value !== undefined) out[key] = value;
  }
  // The loop keeps exactly the keys whose value is defined, which is what Defined<T> states.
  return out as Defined<T>;
}

function readCategory(value: unknown): Category | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (!isRecord(value)) throw new UnreadableBody('category is not a record');
  return defined({ id: readInt64(field(value, 'id')), name: readString(field(value, 'name')) });
}

function readTag(value: unknown): Tag {
  // `<tags><tag/></tags>` decodes an empty element as empty text.
  if (value === '') return {};
  if (!isRecord(value)) throw new UnreadableBody('tag is not a record');
  return defined({ id: readInt64(field(value, 'id')), name: readString(field(value, 'name')) });
}

function readStringList(value: unknown): string[] {
  return (readList(value) ?? []).map((item) => {
    const text = readString(item);
    if (text === undefined) throw new UnreadableBody('null list item');
    return text;
  });
}

function readPet(record: Record<string, unknown>): PetInput {
  return defined({
    id: readInt64(field(record, 'id')),
    category: readCategory(field(record, 'category')),
    name: readString(field(record, 'name')),
    // Both lists default to empty, as in the upstream's model.
    photoUrls: readStringList(field(record, 'photoUrls')),
    tags: (readList(field(record, 'tags')) ?? []).map(readTag),
    status: readString(field(record, 'status')),
  });
}

function readOrder(record: Record<string, unknown>): OrderInput {
  return defined({
    id: readInt64(field(record, 'id')),
    petId: readInt64(field(record, 'petId')),
    quantity: readInt32(field(record, 'quantity')),
    shipDate: readDateTime(field(record, 'shipDate')),
    status: readString(field(record, 'status')),
    complete: readBoolean(field(record, 'complete')),
  });
}

function readUser(record: Record<string, unknown>): UserInput {
  return defined({
    id: readInt64(field(record, 'id')),
    username: readString(field(record, 'username')),
    firstName: readString(field(record, 'firstName')),
    lastName: readString(field(record, 'lastName')),
    email: readString(field(record, 'email')),
    password: readString(field(record, 'password')),
    phone: readString(field(record, 'phone')),
    userStatus: readInt32(field(record, 'userStatus')),
  });
}

/**
 * Decodes the body and converts it with `read`, mapping every decoding or
 * type failure to the upstream's single "unable to convert" message.
 */
function readBody<T>(
  context: RequestContext,
  recordName: RecordName,
  formats: readonly BodyFormat[],
  read: (tree: unknown) => T,
): T | undefined {
  try {
    const tree = decodeBody(context.body, context.headers['content-type'], formats);
    return tree === undefined ? undefined : read(tree);
  } catch (error) {
    if (error instanceof UnreadableBody) throw unconvertible(recordName);
    throw error;
  }
}

function asRecord(tree: unknown): Record<string, unknown> {
  if (!isRecord(tree)) throw new UnreadableBody('not a record');
  return tree;
}

/**
 * Reads a Pet body in JSON, XML or form encoding.
 *
 * @returns `undefined` when no body was sent.
 * @throws HttpError 415 for other media types, 400 for unreadable input.
 */
export function readPetBody(context: RequestContext): PetInput | undefined {
  return readBody(context, 'Pet', ANY_FORMAT, (tree) => readPet(asRecord(tree)));
}

/** Reads an Order body in JSON, XML or form encoding; `undefined` when none was sent. */
export function readOrderBody(context: RequestContext): OrderInput | undefined {
  return readBody(context, 'Order', ANY_FORMAT, (tree) => readOrder(asRecord(tree)));
}

/** Reads a User body in JSON, XML or form encoding; `undefined` when none was sent. */
export function readUserBody(context: RequestContext): UserInput | undefined {
  return readBody(context, 'User', ANY_FORMAT, (tree) => readUser(asRecord(tree)));
}

/** Reads a JSON array of User; `undefined` when no body was sent. */
export function readUserListBody(context: RequestContext): UserInput[] | undefined {
  return readBody(context, 'User', JSON_ONLY, (tree) => {
    if (!Array.isArray(tree)) throw new UnreadableBody('not an array');
    return tree.map((item) => readUser(asRecord(item)));
  });
}

function categoryJson(category: Category): Record<string, unknown> {
  return defined({ id: category.id === undefined ? undefined : int64(category.id), name: category.name });
}

function tagJson(tag: Tag): Record<string, unknown> {
  return defined({ id: tag.id === undefined ? undefined : int64(tag.id), name: tag.name });
}

/** How one record type is written: its XML root name and its JSON and XML shapes. */
type Representation<T> = { root: RecordName; json: (value: T) => unknown; xml: (value: T) => XmlNode };

/** Pet in the upstream's property order: id, category, name, photoUrls, tags, status. */
export const petRepresentation: Representation<Pet> = {
  root: 'Pet',
  json: (pet) =>
    defined({
      id: int64(pet.id),
      category: pet.category === undefined ? undefined : categoryJson(pet.category),
      name: pet.name,
      photoUrls: pet.photoUrls,
      tags: pet.tags.map(tagJson),
      status: pet.status,
    }),
  xml: (pet) =>
    defined({
      id: pet.id,
      category: pet.category === undefined ? undefined : defined({ ...pet.category }),
      name: pet.name,
      // Lists are wrapped, one element per item: <photoUrls><photoUrl>…</photoUrl></photoUrls>.
      photoUrls: { photoUrl: pet.photoUrls },
      tags: { tag: pet.tags.map((tag) => defined({ ...tag })) },
      status: pet.status,
    }),
};

/** Order in the upstream's property order: id, petId, quantity, shipDate, status, complete. */
export const orderRepresentation: Representation<Order> = {
  root: 'Order',
  json: (order) =>
    defined({
      id: int64(order.id),
      petId: order.petId === undefined ? undefined : int64(order.petId),
      quantity: order.quantity,
      shipDate: order.shipDate,
      status: order.status,
      complete: order.complete,
    }),
  xml: (order) => defined({ ...order }),
};

/** User in the upstream's property order; the password is echoed, as upstream does. */
export const userRepresentation: Representation<User> = {
  root: 'User',
  json: (user) =>
    defined({
      id: user.id === undefined ? undefined : int64(user.id),
      username: user.username,
      firstName: user.firstName,
      lastName: user.lastName,
      email: user.email,
      password: user.password,
      phone: user.phone,
      userStatus: user.userStatus,
    }),
  xml: (user) => defined({ ...user }),
};

/**
 * Answers 200 with one record, as XML when the client asked for it first
 * in Accept, otherwise as JSON.
 */
export function recordReply<T>(context: RequestContext, representation: Representation<T>, value: T): Reply {
  if (wantsXml(context.headers)) return xmlReply(toXml(representation.root, representation.xml(value)));
  return jsonReply(toJson(representation.json(value)));
}

/** Answers 200 with a list of records; XML lists use the upstream's `<ArrayList><item>…` shape. */
export function listReply<T>(context: RequestContext, representation: Representation<T>, values: T[]): Reply {
  if (wantsXml(context.headers)) return xmlReply(toXml('ArrayList', { item: values.map(representation.xml) }));
  return jsonReply(toJson(values.map(representation.json)));
}
