/**
 * The cost model (upstream-costs.ts) in the schema's terms: the `@cost` and `@listSize`
 * directives of demand control (IBM's cost specification, as Apollo Federation 2.9 imports it),
 * added to the SDL of `schema/` as the schema is built. Federated routers (Apollo Router, Hive
 * Gateway, Hive Router, Cosmo) read them from the subgraph SDL and composition keeps them in the
 * supergraph. They are written nowhere by hand: the table beside the resolvers is their one home.
 *
 * - `@cost(weight: n)` on each field whose resolver calls the upstream: the REST calls one
 *   resolve of it makes, for one value of the list argument it calls once per value
 *   (`petsByStatus(status:)`), counting a call made only in some cases.
 * - `@listSize(assumedSize: n)` on the lists of {@link ASSUMED_LIST_SIZES}: a router multiplies
 *   the weights of a list field and of the fields below it by it.
 *
 * A router cannot read the length of a list argument (`pets(ids:)` answers one pet per id), nor
 * that calls are made once per distinct value: it multiplies by the assumed size. The gateway's
 * own estimate (src/security/upstream-estimate.ts) reads the arguments and is exact there.
 */
import { Kind, type ConstDirectiveNode, type DocumentNode, type FieldDefinitionNode } from 'graphql';
import { ASSUMED_LIST_SIZES, UPSTREAM_COSTS } from './upstream-costs.js';

/** A directive with one integer argument, as the SDL's AST holds it. */
function directive(name: string, argument: string, value: number): ConstDirectiveNode {
  return {
    kind: Kind.DIRECTIVE,
    name: { kind: Kind.NAME, value: name },
    arguments: [
      {
        kind: Kind.ARGUMENT,
        name: { kind: Kind.NAME, value: argument },
        value: { kind: Kind.INT, value: String(value) },
      },
    ],
  };
}

/** The `@cost` weight of a field: the REST calls one resolve of it makes (one value of a list argument); 0: none. */
function costWeight(key: string): number {
  return UPSTREAM_COSTS[key]?.length ?? 0;
}

/** The directives the cost model gives the field `key` (`Type.field`). */
function costDirectives(key: string): ConstDirectiveNode[] {
  const weight = costWeight(key);
  const size = ASSUMED_LIST_SIZES[key];
  return [
    ...(weight > 0 ? [directive('cost', 'weight', weight)] : []),
    ...(size !== undefined ? [directive('listSize', 'assumedSize', size)] : []),
  ];
}

/** `field` with its cost directives, found by `Type.field`; `placed` records it. */
function withDirectives(type: string, field: FieldDefinitionNode, placed: Set<string>): FieldDefinitionNode {
  const key = `${type}.${field.name.value}`;
  const added = costDirectives(key);
  if (added.length === 0) return field;
  placed.add(key);
  return { ...field, directives: [...(field.directives ?? []), ...added] };
}

/**
 * The areas' SDL documents with the cost model's directives on their fields.
 * @throws Error when a field of the cost model is in none of them (renamed or removed), so that
 * the model and the schema cannot drift apart
 */
export function withCostDirectives(documents: readonly DocumentNode[]): DocumentNode[] {
  const placed = new Set<string>();
  const result = documents.map((document) => ({
    ...document,
    definitions: document.definitions.map((definition) =>
      (definition.kind === Kind.OBJECT_TYPE_DEFINITION || definition.kind === Kind.OBJECT_TYPE_EXTENSION) &&
      definition.fields
        ? {
            ...definition,
            fields: definition.fields.map((field) => withDirectives(definition.name.value, field, placed)),
          }
        : definition,
    ),
  }));
  // `__resolveReference` is no field, and federation adds `_entities` itself.
  const fields = [...Object.keys(UPSTREAM_COSTS), ...Object.keys(ASSUMED_LIST_SIZES)].filter(
    (key) => !key.includes('._'),
  );
  const missing = fields.filter((key) => !placed.has(key));
  if (missing.length > 0)
    throw new Error(`the cost model names fields the schema does not have: ${missing.join(', ')}`);
  return result;
}
