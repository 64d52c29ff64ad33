/**
 * Static explain: the most upstream calls each operation of a document can make, as a formula
 * of its list sizes, without running it (`npm run explain`, scripts/explain.ts). And the N+1
 * check: no field of a type that comes in lists may call the upstream once per item without a
 * request loader.
 *
 * What each field costs is the table beside the resolvers (src/resolvers/upstream-costs.ts);
 * the method and path of each REST operation are its row of the areas' tables
 * (src/upstream/operations.ts).
 */
import {
  getNamedType,
  getNullableType,
  isAbstractType,
  isListType,
  isObjectType,
  Kind,
  parse,
  print,
  validate,
  type ArgumentNode,
  type DirectiveNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import {
  ANSWER_LENGTHS,
  UPSTREAM_COSTS,
  type AnswerLength,
  type FieldCall,
  type FieldCosts,
  type RestOperation,
} from '../src/resolvers/upstream-costs.js';
import { OPERATIONS } from '../src/upstream/operations.js';

/** How a REST operation is called: its method and its path's template. */
export type Route = { method: string; template: string };

/** The method and path template of every REST operation, from the areas' tables (src/upstream/operations.ts). */
export function operationRoutes(): Record<RestOperation, Route> {
  const routes: Partial<Record<string, Route>> = {};
  for (const table of Object.values(OPERATIONS))
    for (const [name, row] of Object.entries(table)) routes[name] = { method: row.method, template: row.path };
  return routes as Record<RestOperation, Route>;
}

/** A product of a number and symbols (list sizes): `2`, `n₁`, `n₁ × m₁`. */
type Monomial = { factor: number; symbols: readonly string[] };

/** One kind of call an operation makes, this many times (at most, when `bound`). */
export type PlanTerm = {
  operations: readonly RestOperation[];
  count: Monomial[];
  /** the count is an upper bound: the call goes through a loader (deduplicated), or is made only in some cases */
  bound: boolean;
  /** through a request loader: one call per distinct key */
  deduplicated: boolean;
  /** made only in this case */
  onlyWhen?: string;
};

/** The upstream cost of one operation. */
export type OperationPlan = {
  /** `query Order`, `mutation` (anonymous) */
  title: string;
  terms: PlanTerm[];
  /** what each symbol of the terms stands for */
  legend: { symbol: string; meaning: string }[];
  /** the number of calls when every count is a number; `exact` unless a term is a bound */
  total?: { calls: number; exact: boolean };
};

const SUBSCRIPTS = '₀₁₂₃₄₅₆₇₈₉';
const subscript = (n: number) => [...String(n)].map((digit) => SUBSCRIPTS[Number(digit)]).join('');

/** Walks one operation's selections, gathering the calls of each field with the number of times it runs. */
class OperationWalk {
  readonly terms: PlanTerm[] = [];
  /** symbol by what it means */
  private readonly symbols = new Map<string, string>();
  private readonly counters = { n: 0, m: 0 };

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>,
    private readonly costs: FieldCosts,
    private readonly lengths: Readonly<Record<string, AnswerLength>>,
  ) {}

  legend(): OperationPlan['legend'] {
    const used = new Set(this.terms.flatMap((term) => term.count.flatMap((monomial) => monomial.symbols)));
    return [...this.symbols].filter(([, symbol]) => used.has(symbol)).map(([meaning, symbol]) => ({ symbol, meaning }));
  }

  /** The selections of `selectionSet` on `parent`, each run `times` times (`conditional`: maybe not at all). */
  walk(selectionSet: SelectionSetNode, parent: GraphQLNamedType, times: Monomial, conditional: boolean): void {
    for (const selection of selectionSet.selections) {
      const maybe = conditional || hasCondition(selection.directives);
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? this.schema.getType(selection.typeCondition.name.value) : parent;
        if (on) this.walk(selection.selectionSet, on, times, maybe);
      } else if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = this.fragments.get(selection.name.value);
        const on = fragment && this.schema.getType(fragment.typeCondition.name.value);
        if (fragment && on) this.walk(fragment.selectionSet, on, times, maybe);
      } else if (!selection.name.value.startsWith('__') && isObjectType(parent)) {
        const field = parent.getFields()[selection.name.value];
        if (field === undefined) continue;
        const key = `${parent.name}.${field.name}`;
        const path = selection.alias?.value ?? field.name;
        for (const call of this.costs[key] ?? []) this.addCall(call, field, selection.arguments ?? [], times, maybe);
        if (selection.selectionSet) {
          const each = this.answerLength(key, field, selection.arguments ?? [], path);
          this.walk(selection.selectionSet, getNamedType(field.type), multiply(times, each), maybe);
        }
      }
    }
  }

  private addCall(
    call: FieldCall,
    field: GraphQLField<unknown, unknown>,
    args: readonly ArgumentNode[],
    times: Monomial,
    conditional: boolean,
  ): void {
    const each = call.eachOf === undefined ? { size: ONE, exact: true } : this.listSize(field, args, call.eachOf, true);
    const count = multiply(times, each.size);
    if (count.factor === 0) return;
    this.terms.push({
      operations: typeof call.operation === 'string' ? [call.operation] : [...call.operation],
      count: [count],
      bound: conditional || call.loader !== undefined || call.onlyWhen !== undefined || !each.exact,
      deduplicated: call.loader !== undefined,
      ...(call.onlyWhen !== undefined ? { onlyWhen: call.onlyWhen } : {}),
    });
  }

  /** How many items a field answers with: 1 for one item, the size of a list argument, or a symbol of its own. */
  private answerLength(
    key: string,
    field: GraphQLField<unknown, unknown>,
    args: readonly ArgumentNode[],
    path: string,
  ): Monomial {
    if (!isListType(getNullableType(field.type))) return ONE;
    const length = this.lengths[key];
    if (length !== undefined) return this.listSize(field, args, length.answerLengthOf, false).size;
    return this.symbol('m', `the items ${path} answers with`);
  }

  /** The number of values of a list argument: `distinct` ones, when the calls are made once per value. */
  private listSize(
    field: GraphQLField<unknown, unknown>,
    args: readonly ArgumentNode[],
    name: string,
    distinct: boolean,
  ): { size: Monomial; exact: boolean } {
    const value = args.find((arg) => arg.name.value === name)?.value;
    if (value === undefined) {
      const fallback = field.args.find((arg) => arg.name === name)?.defaultValue;
      return { size: constant(Array.isArray(fallback) ? fallback.length : 1), exact: true };
    }
    if (value.kind === Kind.VARIABLE)
      return { size: this.symbol('n', `the number of values in $${value.name.value}`), exact: !distinct };
    if (value.kind === Kind.NULL) return { size: constant(0), exact: true };
    if (value.kind !== Kind.LIST) return { size: ONE, exact: true };
    const printed = value.values.map((item) => print(item));
    const variables = value.values.some((item) => item.kind === Kind.VARIABLE);
    return { size: constant(distinct ? new Set(printed).size : printed.length), exact: !variables };
  }

  private symbol(letter: 'n' | 'm', meaning: string): Monomial {
    let symbol = this.symbols.get(meaning);
    if (symbol === undefined) {
      this.counters[letter] += 1;
      symbol = `${letter}${subscript(this.counters[letter])}`;
      this.symbols.set(meaning, symbol);
    }
    return { factor: 1, symbols: [symbol] };
  }
}

const ONE: Monomial = { factor: 1, symbols: [] };
const constant = (factor: number): Monomial => ({ factor, symbols: [] });
const multiply = (a: Monomial, b: Monomial): Monomial => ({
  factor: a.factor * b.factor,
  symbols: [...a.symbols, ...b.symbols].sort(),
});

/** Whether `@skip` or `@include` may leave a selection out. */
function hasCondition(directives: readonly DirectiveNode[] | undefined): boolean {
  return (directives ?? []).some((directive) => directive.name.value === 'skip' || directive.name.value === 'include');
}

/** Terms of the same calls added up: `2 × GET /pet/{petId}` rather than the same term twice. */
function combined(terms: readonly PlanTerm[]): PlanTerm[] {
  const byCall = new Map<string, PlanTerm>();
  for (const term of terms) {
    const key = `${term.operations.join('|')} ${term.deduplicated} ${term.onlyWhen ?? ''}`;
    const known = byCall.get(key);
    if (known === undefined) byCall.set(key, { ...term, count: [...term.count] });
    else {
      known.bound ||= term.bound;
      for (const monomial of term.count) {
        const same = known.count.find((kept) => kept.symbols.join() === monomial.symbols.join());
        if (same) known.count[known.count.indexOf(same)] = { ...same, factor: same.factor + monomial.factor };
        else known.count.push(monomial);
      }
    }
  }
  return [...byCall.values()];
}

/** The upstream cost of each operation of `document`. */
export function planOperations(
  schema: GraphQLSchema,
  document: DocumentNode,
  costs: FieldCosts = UPSTREAM_COSTS,
  lengths: Readonly<Record<string, AnswerLength>> = ANSWER_LENGTHS,
): OperationPlan[] {
  const fragments = new Map(
    document.definitions
      .filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION)
      .map((fragment) => [fragment.name.value, fragment]),
  );
  return document.definitions
    .filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)
    .map((operation) => {
      const root = schema.getRootType(operation.operation);
      const walk = new OperationWalk(schema, fragments, costs, lengths);
      if (root) walk.walk(operation.selectionSet, root, ONE, false);
      const terms = combined(walk.terms);
      const numeric = terms.every((term) => term.count.every((monomial) => monomial.symbols.length === 0));
      const calls = terms.reduce((sum, term) => sum + term.count.reduce((part, { factor }) => part + factor, 0), 0);
      return {
        title: `${operation.operation}${operation.name ? ` ${operation.name.value}` : ''}`,
        terms,
        legend: walk.legend(),
        ...(numeric ? { total: { calls, exact: terms.every((term) => !term.bound) } } : {}),
      };
    });
}

/** `2`, `n₁`, `2 × n₁`, `(n₁ + 2)`. */
function formatCount(count: readonly Monomial[]): string {
  const parts = count.map(({ factor, symbols }) =>
    symbols.length === 0 ? String(factor) : [...(factor === 1 ? [] : [String(factor)]), ...symbols].join(' × '),
  );
  return parts.length === 1 ? (parts[0] ?? '0') : `(${parts.join(' + ')})`;
}

/** One term: `≤ n₁ × GET /pet/{petId} (deduplicated)`. */
function formatTerm(term: PlanTerm, routes: Readonly<Record<RestOperation, Route>>): string {
  const calls = term.operations.map((operation) => {
    const route = routes[operation];
    return `${route.method} ${route.template}`;
  });
  const call = calls.length === 1 ? (calls[0] ?? '') : `(${calls.join(' | ')})`;
  const notes = [
    ...(term.deduplicated ? ['deduplicated'] : []),
    ...(term.onlyWhen ? [`only when ${term.onlyWhen}`] : []),
  ];
  return `${term.bound ? '≤ ' : ''}${formatCount(term.count)} × ${call}${notes.length ? ` (${notes.join(', ')})` : ''}`;
}

/** An operation's plan as the explain command prints it: its title, its formula, its legend and total. */
export function formatPlan(plan: OperationPlan, routes: Readonly<Record<RestOperation, Route>>): string {
  const formula =
    plan.terms.length === 0 ? 'no upstream call' : plan.terms.map((term) => formatTerm(term, routes)).join(' + ');
  const lines = [`${plan.title}: ${formula}`];
  for (const { symbol, meaning } of plan.legend) lines.push(`  where ${symbol} = ${meaning}`);
  if (plan.total !== undefined && plan.terms.length > 0)
    lines.push(
      `  ${plan.total.exact ? 'exactly' : 'at most'} ${plan.total.calls} upstream call${plan.total.calls === 1 ? '' : 's'}`,
    );
  return lines.join('\n');
}

/** A document read against the schema: its plans, or why it cannot be explained (syntax or validation errors). */
export function explainSource(
  schema: GraphQLSchema,
  source: string,
): { plans: OperationPlan[]; errors: [] } | { plans: []; errors: string[] } {
  let document: DocumentNode;
  try {
    document = parse(source);
  } catch (error) {
    return { plans: [], errors: [(error as Error).message] };
  }
  const errors = validate(schema, document);
  if (errors.length > 0) return { plans: [], errors: errors.map((error) => error.message) };
  return { plans: planOperations(schema, document), errors: [] };
}

/**
 * The object types whose fields run once per item of a list: those a field answers a list of
 * (a union's members too), and every type below them.
 */
function typesInLists(schema: GraphQLSchema): Set<string> {
  const found = new Set<string>();
  const add = (type: GraphQLNamedType) => {
    const members = isAbstractType(type) ? schema.getPossibleTypes(type) : [type];
    for (const member of members) {
      if (!isObjectType(member) || found.has(member.name)) continue;
      found.add(member.name);
      for (const field of Object.values(member.getFields())) add(getNamedType(field.type));
    }
  };
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields()))
      if (isListType(getNullableType(field.type))) add(getNamedType(field.type));
  }
  return found;
}

/**
 * The N+1 check: each field of a type that comes in lists whose resolver calls the upstream
 * without a request loader, i.e. once per item of the list, as `Type.field: …`. Empty when
 * there is none.
 */
export function callsPerItemWithoutLoader(schema: GraphQLSchema, costs: FieldCosts = UPSTREAM_COSTS): string[] {
  const listed = typesInLists(schema);
  const roots = new Set(
    [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].map((type) => type?.name),
  );
  return Object.entries(costs).flatMap(([key, calls]) => {
    const type = key.slice(0, key.indexOf('.'));
    if (roots.has(type) || !listed.has(type)) return [];
    return calls
      .filter((call) => call.loader === undefined)
      .map(
        (call) =>
          `${key}: calls ${[call.operation].flat().join(' or ')} once per ${type} without a request loader ` +
          `(n ${type} items make n calls): go through one of src/loaders.ts`,
      );
  });
}
