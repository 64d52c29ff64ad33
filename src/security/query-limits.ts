/**
 * Limits on the shape of an operation, checked before anything runs: depth, aliases, tokens,
 * directives and an estimated cost (graphql-armor's rules), introspection when it is off, and an
 * operation type the graph does not serve (`subscription`). A refused operation gets one error
 * with a stable code and HTTP 400; no resolver runs, so the upstreams receive nothing.
 */
import { ApolloArmor, EnvelopArmor } from '@escape.tech/graphql-armor';
import {
  getNamedType,
  isIntrospectionType,
  type DocumentNode,
  type GraphQLError,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { codedError, type ErrorCode } from '../errors.js';

/** The limits on one operation. */
export type QueryLimits = {
  /** deepest nesting of fields (inline fragments and fragment spreads count as a level). @default 10 */
  maxDepth: number;
  /** most aliases in an operation (`__typename` aliases are free). @default 50 */
  maxAliases: number;
  /** most lexical tokens in a document (names, punctuation, values). @default 2000 */
  maxTokens: number;
  /** most directives in an operation. @default 20 */
  maxDirectives: number;
  /** highest estimated cost: 1 per scalar, 2 per object, children weighted 1.5× per level. @default 1000 */
  maxCost: number;
  /** whether `__schema`, `__type` and `_service` may be asked for. @default true, false when NODE_ENV=production */
  introspection: boolean;
};

/** What armor calls when a limit is exceeded (its types package is not a direct dependency). */
type RejectCallback = NonNullable<
  NonNullable<NonNullable<ConstructorParameters<typeof EnvelopArmor>[0]>['maxDepth']>['onReject']
>[number];

/** armor's messages start with "Syntax Error: " although nothing is wrong with the syntax. */
function plainMessage(error: GraphQLError): string {
  return error.message.replace(/^Syntax Error: /, '');
}

/** Reports a validation rule's rejection as one validation error with our code (yoga sends it with 400). */
function report(code: ErrorCode): RejectCallback {
  return (context, error) => context?.reportError(codedError(code, plainMessage(error)));
}

/**
 * The gateway's limits: graphql-armor's token limit on parsing, as its envelop plugin, and its
 * depth, alias, directive and cost rules and field-suggestion mask (with the introspection ban
 * when introspection is off, `validationHooks`, other plugins' hooks that add rules, and
 * `validationChecks`, their refusals that depend on the request) in one
 * validation plugin ({@link useValidationRules}). Rejections
 * are reported as validation errors (not thrown), so they reach the caller as a 400 with a code;
 * the token limit, which is checked while parsing, throws its own coded error.
 */
export function useQueryLimits(
  limits: QueryLimits,
  validationHooks: readonly ValidateHook[] = [],
  validationChecks: readonly ValidateCheck[] = [],
): Plugin[] {
  const validation = { propagateOnRejection: false, exposeLimits: true } as const;
  // armor's rules, made once: its envelop plugin would make each one again for every request.
  const { validationRules } = new ApolloArmor({
    maxDepth: { ...validation, n: limits.maxDepth, onReject: [report('QUERY_TOO_DEEP')] },
    maxAliases: { ...validation, n: limits.maxAliases, onReject: [report('TOO_MANY_ALIASES')] },
    maxDirectives: { ...validation, n: limits.maxDirectives, onReject: [report('TOO_MANY_DIRECTIVES')] },
    costLimit: { ...validation, maxCost: limits.maxCost, onReject: [report('QUERY_TOO_COSTLY')] },
    maxTokens: { enabled: false },
    blockFieldSuggestion: { enabled: false },
  }).protect();
  const { plugins: parsing } = new EnvelopArmor({
    maxDepth: { enabled: false },
    maxAliases: { enabled: false },
    maxDirectives: { enabled: false },
    costLimit: { enabled: false },
    maxTokens: {
      n: limits.maxTokens,
      exposeLimits: true,
      // The parser calls this with no validation context: throwing is how a parse is refused.
      onReject: [
        (_, error) => {
          throw codedError('TOO_MANY_TOKENS', plainMessage(error), { status: 400 });
        },
      ],
    },
    // "Did you mean …?" in validation messages spells out the schema: hidden when introspection is.
    blockFieldSuggestion: { enabled: !limits.introspection },
  }).protect();
  const rules = [...validationRules, servedOperationTypes, ...(limits.introspection ? [] : [noIntrospection])];
  // The field-suggestion mask is a validation hook: kept with each document's validation result.
  const validating = parsing.flatMap((plugin) => (plugin.onValidate === undefined ? [] : [plugin.onValidate]));
  const parsingOnly = parsing.map(({ onValidate: _kept, ...rest }) => rest as Plugin);
  return [...parsingOnly, useValidationRules(rules, [...validating, ...validationHooks], validationChecks)];
}

/** A plugin's `onValidate` hook, such as one that only adds rules (yoga's defer-stream plugin). */
export type ValidateHook = NonNullable<Plugin['onValidate']>;

/**
 * A refusal that depends on the request, not only on its document (its Accept header, its
 * variables): the errors to answer with, or undefined to validate as usual. Made for each request,
 * before the document's kept result, and never kept.
 */
export type ValidateCheck = (payload: Parameters<ValidateHook>[0]) => readonly GraphQLError[] | undefined;

/**
 * Adds `rules` to validation, and keeps each document's validation result (by schema and parsed
 * document, which yoga's parser cache hands out once per document text), so a document is
 * validated once. It replaces yoga's validation cache (turned off in src/gateway.ts), which keys
 * its results by the names of every rule, joined anew for each request. `hooks` are other
 * plugins' validation hooks whose work is kept with the result (they add rules, or change the
 * errors found): they run when a document is validated, not for each request that sends it again.
 * `checks` are refusals that depend on the request ({@link ValidateCheck}), made before all that.
 */
export function useValidationRules(
  rules: readonly ValidationRule[],
  hooks: readonly ValidateHook[] = [],
  checks: readonly ValidateCheck[] = [],
): Plugin {
  const results = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, readonly Error[]>>();
  return {
    onValidate(payload) {
      const { params, addValidationRule, setResult } = payload;
      for (const check of checks) {
        const refusal = check(payload);
        if (refusal !== undefined) return void setResult([...refusal]);
      }
      const schema = params.schema as GraphQLSchema;
      const documentAST = params.documentAST as DocumentNode;
      let bySchema = results.get(schema);
      if (bySchema === undefined) results.set(schema, (bySchema = new WeakMap()));
      const known = bySchema.get(documentAST);
      if (known !== undefined) return void setResult(known);
      for (const rule of rules) addValidationRule(rule);
      const afters = hooks.map((hook) => hook(payload)).filter((after) => typeof after === 'function');
      const found = bySchema;
      return (done) => {
        // Each hook sees the errors as the hooks before it left them; what the last leaves is kept.
        let result = done.result;
        const setResult = (changed: readonly Error[]) => {
          result = changed;
          done.setResult(changed as Error[]);
        };
        for (const after of afters)
          after({ ...done, valid: result.length === 0, result: result as Error[], setResult });
        found.set(documentAST, result);
      };
    },
  };
}

/**
 * Refuses `__schema` and `__type` (GraphQL introspection) and `_service` (the federation SDL,
 * which is the same schema in another form). `__typename` stays allowed: clients need it.
 */
const noIntrospection: ValidationRule = (context) => ({
  Field(node) {
    const type = getNamedType(context.getType());
    const isServiceSdl =
      node.name.value === '_service' && context.getParentType() === context.getSchema().getQueryType();
    if ((type && isIntrospectionType(type)) || isServiceSdl) {
      context.reportError(
        codedError('INTROSPECTION_DISABLED', `Introspection is disabled: "${node.name.value}" cannot be queried.`, {
          nodes: node,
        }),
      );
      // One error per introspection field, not one for each field below it.
      return false;
    }
    return undefined;
  },
});

/**
 * Refuses an operation of a type the schema has no root for (`subscription`: the graph serves
 * none; updates come from `@live` queries). graphql-js 16 validates no such rule and its executor
 * answers with an error that has no code; as a validation error it is a request error, coded like
 * every other (400 under `application/graphql-response+json`).
 */
const servedOperationTypes: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (context.getSchema().getRootType(node.operation) !== undefined) return;
    const message =
      `The graph serves no ${node.operation} operations: send a query or a mutation ` +
      '(for updates, a query with @live where LIVE_QUERIES is on).';
    context.reportError(codedError('GRAPHQL_VALIDATION_FAILED', message, { nodes: node }));
  },
});
