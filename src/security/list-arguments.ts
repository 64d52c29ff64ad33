/**
 * A bound on the length of every list argument (`pets(ids)`, `petsByTags(tags)`,
 * `petsByStatus(status)`, `createUsers(input)`, and lists inside input objects such as
 * `PetInput.photoUrls`): a longer list fails its field with BAD_USER_INPUT before the resolver
 * runs, so no upstream call is made for it. One item of a list argument is at most one upstream
 * call; this keeps one field from asking for thousands.
 */
import {
  defaultFieldResolver,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { badUserInput } from '../errors.js';

/**
 * Fields left out: a router sends `_entities` as many representations as its plan needs, and
 * those are bounded by the upstream call budget per operation instead (each distinct entity is
 * one call).
 */
const EXEMPT = new Set(['Query._entities']);

/** True when values of `type` can hold a list, at any depth of input objects. */
function holdsList(type: GraphQLInputType, seen = new Set<string>()): boolean {
  if (isNonNullType(type)) return holdsList(type.ofType, seen);
  if (isListType(type)) return true;
  if (!isInputObjectType(type) || seen.has(type.name)) return false;
  seen.add(type.name);
  return Object.values(type.getFields()).some((field) => holdsList(field.type, seen));
}

/** Throws BAD_USER_INPUT naming the first list in `value` longer than `maxItems`. */
function check(type: GraphQLInputType, value: unknown, path: string, maxItems: number): void {
  if (value === null || value === undefined) return;
  if (isNonNullType(type)) return check(type.ofType, value, path, maxItems);
  if (isListType(type)) {
    if (!Array.isArray(value)) return;
    if (value.length > maxItems)
      throw badUserInput(`${path} has ${value.length} items; at most ${maxItems} are allowed`);
    value.forEach((item, index) => check(type.ofType, item, `${path}[${index}]`, maxItems));
    return;
  }
  if (isInputObjectType(type) && typeof value === 'object') {
    const fields = value as Record<string, unknown>;
    for (const field of Object.values(type.getFields()))
      check(field.type, fields[field.name], `${path}.${field.name}`, maxItems);
  }
}

function checkArguments(args: readonly GraphQLArgument[], values: Record<string, unknown>, maxItems: number): void {
  for (const arg of args) check(arg.type, values[arg.name], arg.name, maxItems);
}

/**
 * Wraps the resolver of every field that takes a list argument with the length check, in place,
 * and returns the schema. Fields without one are untouched (and cost nothing).
 */
export function limitListArguments(schema: GraphQLSchema, maxItems: number): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (EXEMPT.has(`${type.name}.${field.name}`) || !field.args.some((arg) => holdsList(arg.type))) continue;
      const resolve = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args: Record<string, unknown>, context, info) => {
        checkArguments(field.args, args, maxItems);
        return resolve(source, args, context, info);
      };
    }
  }
  return schema;
}
