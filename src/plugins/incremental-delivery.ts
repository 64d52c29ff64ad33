/**
 * Incremental delivery: `@defer` and `@stream` (yoga's defer-stream plugin). The plugin gives the
 * schema both directives and adds their validation rules; yoga's executor then answers an
 * operation that uses them with a stream of results, which yoga sends as multipart/mixed or as
 * server-sent events, whichever the client's Accept header asks for (docs/graph.md, "Incremental
 * delivery"). Both HTTP paths answer such an operation through yoga (src/http/lane.ts).
 *
 * yoga masks the errors at the top of each result, not those of a deferred fragment or of
 * streamed items (`incremental[].errors`): without the second plugin here, an upstream failure
 * in a deferred part would arrive without its code, and an unexpected error with its own message.
 */
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';
import type { GraphQLError, GraphQLSchema } from 'graphql';
import { replacedBy } from '../errors.js';

/** What the incremental delivery plugins are built with. */
export type IncrementalDeliveryOptions = {
  /** yoga's `maskedErrors.maskError`: applied to the errors of every deferred or streamed part */
  maskError(error: unknown, message: string): GraphQLError;
  /** logs an error the masking replaced (an unexpected one keeps its stack, server-side), for the operation of `context` */
  logMasked(error: unknown, context: object): void;
};

/** One part of an incremental result, as the executor makes it: a deferred fragment's data or streamed items. */
type IncrementalPart = { errors?: readonly GraphQLError[] } & Record<string, unknown>;

/** `@defer` and `@stream`, with the errors of their parts masked as those of a whole result are. */
export function useIncrementalDelivery(options: IncrementalDeliveryOptions): Plugin[] {
  const maskPart = (part: IncrementalPart, context: object): IncrementalPart => {
    if (!part.errors?.length) return part;
    const errors = part.errors.map((error) => {
      const masked = options.maskError(error, 'Unexpected error.');
      const original = replacedBy(masked);
      if (original !== undefined) options.logMasked(original, context);
      return masked;
    });
    return { ...part, errors };
  };
  const maskIncrementalErrors: Plugin = {
    onExecute: () => ({
      onExecuteDone: (payload) =>
        handleStreamOrSingleExecutionResult(payload, ({ args, result, setResult }) => {
          const incremental = (result as { incremental?: readonly IncrementalPart[] }).incremental;
          if (!incremental?.some((part) => part.errors?.length)) return;
          // A subsequent payload of the executor, which envelop's result type does not name.
          const masked = { ...result, incremental: incremental.map((part) => maskPart(part, args.contextValue as object)) };
          setResult(masked as typeof result);
        }),
    }),
  };
  return [useDeferStream(), maskIncrementalErrors];
}

/**
 * `schema` as yoga serves it with {@link useIncrementalDelivery}: with the `@defer` and `@stream`
 * directives, added by the defer-stream plugin's own schema hook (what `schema/printed/` holds).
 */
export function withIncrementalDirectives(schema: GraphQLSchema): GraphQLSchema {
  let served = schema;
  useDeferStream().onSchemaChange?.({ schema, replaceSchema: (replaced: GraphQLSchema) => (served = replaced) });
  return served;
}
