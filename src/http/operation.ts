/**
 * One operation the HTTP front serves, through yoga's envelop: its document parsed and validated
 * (yoga's parser and validation cache, every plugin's onParse and onValidate), its context built
 * (yoga's context factory and every onContextBuilding) and executed (yoga's executor and every
 * onExecute, the masking of errors among them). A document the front does not execute is yoga's.
 */
import {
  getOperationAST,
  OperationTypeNode,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLError,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { YogaServerInstance } from 'graphql-yoga';
import type { GraphQLContext } from '../context.js';
import type { OperationRecord } from '../observability/request-context.js';
import { usesIncrementalDelivery } from '../plugins/incremental-delivery.js';
import type { Params } from './request.js';

/** What `yoga.getEnveloped` gives for one operation: its parse, validate, context and execute, with every plugin's hooks. */
export type Enveloped = ReturnType<YogaServerInstance<Record<string, unknown>, GraphQLContext>['getEnveloped']>;

/**
 * The operation's document, parsed and validated through yoga's envelop (its parser and
 * validation cache, its limits, its rules); undefined when it does not parse or validate, or is
 * not one the lane executes: yoga answers those.
 */
export function operable(enveloped: Enveloped, params: Params, method: 'GET' | 'POST'): DocumentNode | undefined {
  let document: DocumentNode;
  try {
    document = enveloped.parse(params.query) as DocumentNode;
  } catch {
    return undefined;
  }
  if ((enveloped.validate(enveloped.schema, document) as readonly GraphQLError[]).length > 0) return undefined;
  // @defer and @stream are answered part by part, in the media type the Accept header picks:
  // yoga's result processors do it, so yoga answers them, whatever the Accept (docs/graph.md).
  if (usesIncrementalDelivery(params.query, document)) return undefined;
  return servableOperation(document, params.operationName, method) ? document : undefined;
}

/** The operation the lane executes: a query, or a mutation sent as a POST; else undefined (yoga's). */
function servableOperation(
  document: DocumentNode,
  operationName: string | null | undefined,
  method: 'GET' | 'POST',
): OperationDefinitionNode | undefined {
  const definition = getOperationAST(document, operationName ?? undefined);
  return definition &&
    (definition.operation === OperationTypeNode.QUERY ||
      (definition.operation === OperationTypeNode.MUTATION && method === 'POST'))
    ? definition
    : undefined;
}

/**
 * Runs an operation through yoga's envelop: its context (yoga's context factory and every
 * plugin's `onContextBuilding`) and its execution (yoga's executor and every `onExecute`, the
 * masking of errors among them). A failure outside execution is masked with `maskError`, as yoga
 * masks it.
 */
export async function execute(
  enveloped: Enveloped,
  document: DocumentNode,
  params: Params,
  operation: OperationRecord,
  maskError: (error: unknown, message: string) => GraphQLError,
): Promise<ExecutionResult> {
  try {
    const built = enveloped.contextFactory() as Record<string, unknown> | Promise<Record<string, unknown>>;
    const contextValue = built instanceof Promise ? await built : built;
    const executed = (await enveloped.execute({
      schema: enveloped.schema as GraphQLSchema,
      document,
      contextValue,
      variableValues: params.variables ?? undefined,
      operationName: params.operationName ?? undefined,
    })) as ExecutionResult | AsyncIterable<unknown>;
    if (Symbol.asyncIterator in executed) throw new Error('a query or mutation answered with a stream');
    return executed;
  } catch (error) {
    return { errors: [maskError(error, 'Unexpected error.')] };
  } finally {
    operation.ended = performance.now();
  }
}
