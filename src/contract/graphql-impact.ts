/**
 * What each REST operation feeds in the graph: which GraphQL fields call it, which GraphQL type
 * its answer becomes, which input type its body is written from, which arguments its parameters
 * come from and which credential it sends. The upstream check (`openapi-diff.ts`) reads it to
 * say, for each difference between an upstream's document and the gateway's, what it does to the
 * graph.
 *
 * What each operation feeds is its row's `graph` in `src/upstream/operations.ts`, the one table
 * of REST operations; `test/contract-impact.test.ts` checks every GraphQL coordinate against the
 * executable schema and the resolvers, and that every area function has a row. Which fields of a payload are used
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
import { PETSTORE_OPERATIONS, PLANTS_OPERATIONS, type GraphUse, type OperationRow } from '../upstream/operations.js';

/** How the gateway uses one REST operation: what its row says it feeds in the graph, and the credential it sends. */
export type OperationUse = GraphUse & { security: Security };

/** An area's operations as the upstream check reads them, from the area's table. */
function usesFrom(table: Readonly<Record<string, OperationRow>>): Readonly<Record<string, OperationUse>> {
  return Object.fromEntries(
    Object.entries(table).map(([name, row]) => [name, { ...row.graph, security: row.security }]),
  );
}

/** The pet store's operations, as its table (`src/upstream/operations.ts`) describes them. */
export const PETSTORE_USES = usesFrom(PETSTORE_OPERATIONS);
/** The plant area's operations, as its table describes them. */
export const PLANTS_USES = usesFrom(PLANTS_OPERATIONS);

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
