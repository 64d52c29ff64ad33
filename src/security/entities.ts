/**
 * Federation representations checked before `_entities` runs. @apollo/subgraph answers a
 * representation of a type it does not know (`{ __typename: "Nope" }`, or a string) with a plain
 * Error, which the gateway must mask as an internal one; it is the caller's mistake, so it is
 * BAD_USER_INPUT naming the representation instead.
 */
import { defaultFieldResolver, isUnionType, type GraphQLSchema } from 'graphql';
import { badUserInput } from '../errors.js';

/** Wraps the `_entities` resolver with the check, in place, and returns the schema. */
export function checkRepresentations(schema: GraphQLSchema): GraphQLSchema {
  const field = schema.getQueryType()?.getFields()['_entities'];
  const entity = schema.getType('_Entity');
  if (!field || !isUnionType(entity)) return schema;
  const entities = new Set(entity.getTypes().map((type) => type.name));
  const names = [...entities].join(', ');
  const resolve = field.resolve ?? defaultFieldResolver;
  field.resolve = (source, args: { representations?: unknown }, context, info) => {
    const representations = Array.isArray(args.representations) ? args.representations : [];
    representations.forEach((representation: unknown, index) => {
      const typename: unknown =
        typeof representation === 'object' && representation !== null
          ? Reflect.get(representation, '__typename')
          : undefined;
      if (typeof typename !== 'string' || !entities.has(typename)) {
        throw badUserInput(`representations[${index}] must be an object whose __typename is one of ${names}`);
      }
    });
    return resolve(source, args, context, info);
  };
  return schema;
}
