/**
 * The gateway's estimate of an operation's upstream calls, made after validation and before
 * anything runs, from the cost model beside the resolvers (src/resolvers/upstream-costs.ts): the
 * most REST calls the operation can make. It knows what a router reading `@cost` and `@listSize`
 * cannot: the values of the arguments, variables resolved, so `pets(ids: ["1", "2", "3", "2"])`
 * is 3 calls (one per distinct id), `petsByStatus(status: [AVAILABLE])` 1, and a field that
 * `@skip` leaves out none. Where only the upstream knows a list's length (the pets of a status),
 * the calls of the fields below it are counted for its assumed size.
 *
 * Cheap: each operation of a document is read once into its call sites (kept by document, which
 * yoga's parser cache hands out once per document text); a request only counts the values of the
 * sites' arguments, and a document whose count depends on no variable is counted once.
 */
import {
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  Kind,
  valueFromASTUntyped,
  type ArgumentNode,
  type DirectiveNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import {
  ANSWER_LENGTHS,
  ASSUMED_LIST_SIZES,
  DEFAULT_ASSUMED_LIST_SIZE,
  UPSTREAM_COSTS,
  type FieldCall,
} from '../resolvers/upstream-costs.js';

/** The values of a request's variables, as it sent them. */
type Variables = Readonly<Record<string, unknown>> | null | undefined;

/** A list argument as the document gives it, with its field's default when the document gives none. */
type ListArgument = { node: ValueNode | undefined; fallback: unknown };

/** How many times a call site runs: for each list above it, its assumed size, or the length of an argument. */
type Factor = number | ListArgument;

/** A `@skip` or `@include` on a selection above a call site. */
type Condition = { skip: boolean; value: ValueNode };

/** One kind of call a field of the operation makes, where it stands in the operation. */
type CallSite = {
  /** one call per distinct value of this list argument; undefined: one call */
  each: ListArgument | undefined;
  factors: readonly Factor[];
  conditions: readonly Condition[];
};

/** An operation read into its call sites; `calls` when the count depends on no variable. */
type ReadOperation = { sites: readonly CallSite[]; defaults: Readonly<Record<string, unknown>>; calls?: number };

/** The estimates of one schema's operations. */
export class UpstreamEstimator {
  readonly #read = new WeakMap<DocumentNode, Map<string, ReadOperation>>();

  constructor(private readonly schema: GraphQLSchema) {}

  /**
   * The most upstream calls the operation `operationName` of a validated `document` makes with
   * `variables`; 0 when the document has no such operation.
   */
  estimate(document: DocumentNode, operationName: string | null | undefined, variables: Variables): number {
    let byName = this.#read.get(document);
    if (byName === undefined) this.#read.set(document, (byName = new Map<string, ReadOperation>()));
    const name = operationName ?? '';
    let read = byName.get(name);
    if (read === undefined) byName.set(name, (read = this.readOperation(document, operationName)));
    if (read.calls !== undefined) return read.calls;
    const values = variables ?? {};
    let calls = 0;
    for (const site of read.sites) calls += siteCalls(site, values, read.defaults);
    return calls;
  }

  private readOperation(document: DocumentNode, operationName: string | null | undefined): ReadOperation {
    const fragments = new Map<string, FragmentDefinitionNode>();
    let operation: OperationDefinitionNode | undefined;
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
      else if (
        definition.kind === Kind.OPERATION_DEFINITION &&
        (operationName ? definition.name?.value === operationName : operation === undefined)
      )
        operation = definition;
    }
    const root = operation && this.schema.getRootType(operation.operation);
    if (operation === undefined || root === undefined || root === null) return { sites: [], defaults: {}, calls: 0 };
    const sites: CallSite[] = [];
    new SiteWalk(this.schema, fragments, sites).walk(operation.selectionSet, root, [], []);
    const defaults: Record<string, unknown> = {};
    for (const definition of operation.variableDefinitions ?? [])
      if (definition.defaultValue)
        defaults[definition.variable.name.value] = valueFromASTUntyped(definition.defaultValue);
    const constant = sites.every(
      (site) =>
        !usesVariables(site.each?.node) &&
        site.factors.every((factor) => typeof factor === 'number' || !usesVariables(factor.node)) &&
        site.conditions.every((condition) => !usesVariables(condition.value)),
    );
    const read: ReadOperation = { sites, defaults };
    return constant ? { ...read, calls: sites.reduce((sum, site) => sum + siteCalls(site, {}, {}), 0) } : read;
  }
}

/** Walks an operation's selections, gathering the call sites of its fields. */
class SiteWalk {
  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>,
    private readonly sites: CallSite[],
  ) {}

  walk(selectionSet: SelectionSetNode, parent: GraphQLNamedType, factors: Factor[], conditions: Condition[]): void {
    for (const selection of selectionSet.selections) {
      const under = [...conditions, ...conditionsOf(selection.directives)];
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? this.schema.getType(selection.typeCondition.name.value) : parent;
        if (on) this.walk(selection.selectionSet, on, factors, under);
      } else if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = this.fragments.get(selection.name.value);
        const on = fragment && this.schema.getType(fragment.typeCondition.name.value);
        if (fragment && on) this.walk(fragment.selectionSet, on, factors, under);
      } else if (isObjectType(parent)) {
        const field = parent.getFields()[selection.name.value];
        if (field === undefined) continue;
        const key = `${parent.name}.${field.name}`;
        const args = selection.arguments ?? [];
        for (const call of UPSTREAM_COSTS[key] ?? []) this.sites.push(site(call, field, args, factors, under));
        if (selection.selectionSet)
          this.walk(
            selection.selectionSet,
            getNamedType(field.type),
            [...factors, ...factorOf(key, field, args)],
            under,
          );
      }
    }
  }
}

/** A call site of `call`, made by `field` with `args`. */
function site(
  call: FieldCall,
  field: GraphQLField<unknown, unknown>,
  args: readonly ArgumentNode[],
  factors: readonly Factor[],
  conditions: readonly Condition[],
): CallSite {
  return { each: call.eachOf === undefined ? undefined : listArgument(field, args, call.eachOf), factors, conditions };
}

/** What a field multiplies the fields below it by: nothing for one item, else its answer's length. */
function factorOf(key: string, field: GraphQLField<unknown, unknown>, args: readonly ArgumentNode[]): Factor[] {
  if (!isListType(getNullableType(field.type))) return [];
  const length = ANSWER_LENGTHS[key];
  if (length !== undefined) return [listArgument(field, args, length.answerLengthOf)];
  return [ASSUMED_LIST_SIZES[key] ?? DEFAULT_ASSUMED_LIST_SIZE];
}

function listArgument(
  field: GraphQLField<unknown, unknown>,
  args: readonly ArgumentNode[],
  name: string,
): ListArgument {
  return {
    node: args.find((arg) => arg.name.value === name)?.value,
    fallback: field.args.find((arg) => arg.name === name)?.defaultValue,
  };
}

function conditionsOf(directives: readonly DirectiveNode[] | undefined): Condition[] {
  const found: Condition[] = [];
  for (const directive of directives ?? []) {
    const name = directive.name.value;
    const value = directive.arguments?.find((arg) => arg.name.value === 'if')?.value;
    if ((name === 'skip' || name === 'include') && value) found.push({ skip: name === 'skip', value });
  }
  return found;
}

/** Whether a value of the document holds a variable. */
function usesVariables(node: ValueNode | undefined): boolean {
  if (node === undefined) return false;
  if (node.kind === Kind.VARIABLE) return true;
  if (node.kind === Kind.LIST) return node.values.some(usesVariables);
  if (node.kind === Kind.OBJECT) return node.fields.some((field) => usesVariables(field.value));
  return false;
}

/** The value of a document's value with the request's variables (a missing variable: its default). */
function valueOf(node: ValueNode, variables: Readonly<Record<string, unknown>>, defaults: Variables): unknown {
  if (node.kind === Kind.VARIABLE) {
    const name = node.name.value;
    return Object.hasOwn(variables, name) ? variables[name] : defaults?.[name];
  }
  return valueFromASTUntyped(node, variables);
}

/** The values of a list argument: a single value is a list of one, as GraphQL's input coercion makes it. */
function listValues(
  argument: ListArgument,
  variables: Readonly<Record<string, unknown>>,
  defaults: Variables,
): readonly unknown[] {
  const value = argument.node === undefined ? argument.fallback : valueOf(argument.node, variables, defaults);
  if (value === null || value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** A value as a key of the calls made for it (an id given as 1 or as "1" is one id). */
function keyOf(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value);
}

/** The most calls a site makes with `variables`. */
function siteCalls(site: CallSite, variables: Readonly<Record<string, unknown>>, defaults: Variables): number {
  for (const { skip, value } of site.conditions) {
    const condition = valueOf(value, variables, defaults);
    // Unknown (a missing variable, which execution refuses): counted, as an estimate must not be low.
    if (typeof condition === 'boolean' && condition === skip) return 0;
  }
  let calls = site.each === undefined ? 1 : new Set(listValues(site.each, variables, defaults).map(keyOf)).size;
  for (const factor of site.factors) {
    if (calls === 0) return 0;
    calls *= typeof factor === 'number' ? factor : listValues(factor, variables, defaults).length;
  }
  return calls;
}
