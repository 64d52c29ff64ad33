/**
 * A tool's input JSON Schema, derived from its operation's variables and the executable schema,
 * so that an agent sees the same contract a GraphQL client does: non-null variables without a
 * default are required, enums are their GraphQL value names, input objects carry their fields
 * (required ones named), lists are arrays, and `ID`, whose values are int64 ids here, is a string
 * (a JSON number would lose precision past 2^53).
 */
import {
  isEnumType,
  isInputObjectType,
  isInputType,
  isListType,
  isNonNullType,
  isScalarType,
  astFromValue,
  typeFromAST,
  valueFromASTUntyped,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';

/** A JSON Schema, as far as tools use one. */
export type JsonSchema = {
  type?: string;
  description?: string;
  enum?: string[];
  format?: string;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  default?: unknown;
};

/** The JSON Schema of each built-in and gateway scalar; another scalar takes any JSON value. */
const SCALARS: Readonly<Record<string, JsonSchema>> = {
  ID: { type: 'string' },
  String: { type: 'string' },
  Int: { type: 'integer', minimum: -2147483648, maximum: 2147483647 },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  DateTime: { type: 'string', format: 'date-time' },
};

/**
 * The input schema of an operation: one property per variable, described by the argument it is
 * passed to (GraphQL 16 has no descriptions on variables).
 * @throws Error when a variable's type cannot be sent as JSON (an upload's `File`)
 */
export function operationInputSchema(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  descriptions: ReadonlyMap<string, string>,
): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type);
    if (type === undefined || !isInputType(type)) throw new Error(`variable $${name}: not an input type`);
    const property = typeSchema(type, []);
    const description = descriptions.get(name);
    if (description !== undefined) property.description = description;
    if (definition.defaultValue !== undefined) property.default = valueFromASTUntyped(definition.defaultValue);
    else if (isNonNullType(type)) required.push(name);
    properties[name] = property;
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

/** The schema of one input type; `within` holds the input objects being described, to stop at a recursive one. */
function typeSchema(type: GraphQLInputType, within: readonly string[]): JsonSchema {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return { type: 'array', items: typeSchema(inner.ofType, within) };
  if (isEnumType(inner)) {
    const schema: JsonSchema = { type: 'string', enum: inner.getValues().map((value) => value.name) };
    if (inner.description) schema.description = inner.description;
    return schema;
  }
  if (isScalarType(inner)) {
    if (inner.name === 'File') throw new Error('an upload (File) cannot be a tool argument');
    return { ...(SCALARS[inner.name] ?? {}) };
  }
  if (isInputObjectType(inner)) {
    const named = inner.name;
    // A recursive input object is described down to its first repetition, then as any object.
    if (within.includes(named)) return { type: 'object' };
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const field of Object.values(inner.getFields())) {
      const property = typeSchema(field.type, [...within, named]);
      if (field.description) property.description = field.description;
      // The default as a caller writes it (an enum's name, not its internal value).
      const fallback = field.defaultValue === undefined ? undefined : astFromValue(field.defaultValue, field.type);
      if (fallback) property.default = valueFromASTUntyped(fallback);
      else if (isNonNullType(field.type)) required.push(field.name);
      properties[field.name] = property;
    }
    const schema: JsonSchema = {
      type: 'object',
      properties,
      ...(required.length > 0 ? { required } : {}),
      additionalProperties: false,
    };
    if (inner.description) schema.description = inner.description;
    return schema;
  }
  return {};
}
