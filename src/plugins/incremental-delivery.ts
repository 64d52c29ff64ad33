/**
 * Incremental delivery: `@defer` and `@stream` (yoga's defer-stream plugin). The plugin gives the
 * schema both directives and adds their validation rules; yoga's executor then answers an
 * operation that uses them with a stream of results, which yoga sends as multipart/mixed or as
 * server-sent events, whichever the client's Accept header asks for (docs/graph.md, "Incremental
 * delivery"). Both HTTP paths answer such an operation through yoga (src/http/lane.ts).
 *
 * Two additions of ours:
 * - A client whose Accept header allows neither streamed media type is refused before anything
 *   runs (406 `INCREMENTAL_DELIVERY_NOT_ACCEPTED`). yoga would run the operation, a mutation
 *   included, and only then answer 406 with an empty body, its deferred calls still going on.
 * - yoga masks the errors at the top of each result, and the redaction plugin clears secrets
 *   from them, not from those of a deferred fragment or of streamed items
 *   (`incremental[].errors`): without the masking here, an upstream failure in a deferred part
 *   would arrive without its code, an unexpected error with its own message, and an upstream
 *   message that quotes the caller's credential with it.
 */
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { ValidateHook } from '../security/query-limits.js';
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';
import { Kind, visit, type DirectiveNode, type DocumentNode, type GraphQLError, type GraphQLSchema } from 'graphql';
import type { HeaderSource } from '../credentials.js';
import { codedError, rebuilt, replacedBy } from '../errors.js';
import { credentialSecrets, documentSecrets, redact, variableSecrets } from '../secrets.js';

/** What the incremental delivery plugins are built with. */
export type IncrementalDeliveryOptions = {
  /** yoga's `maskedErrors.maskError`: applied to the errors of every deferred or streamed part */
  maskError(error: unknown, message: string): GraphQLError;
  /** logs an error the masking replaced (an unexpected one keeps its stack, server-side), for the operation of `context` */
  logMasked(error: unknown, context: object): void;
};

/** One part of an incremental result, as the executor makes it: a deferred fragment's data or streamed items. */
type IncrementalPart = { errors?: readonly GraphQLError[] } & Record<string, unknown>;

/** The `@defer` and `@stream` directives of each document, by the document yoga's parser cache hands out once per text. */
const directivesOf = new WeakMap<DocumentNode, readonly DirectiveNode[]>();

/** The `@defer` and `@stream` directives a document holds (found once per parsed document). */
export function incrementalDirectives(document: DocumentNode): readonly DirectiveNode[] {
  let found = directivesOf.get(document);
  if (found === undefined) {
    const directives: DirectiveNode[] = [];
    visit(document, {
      Directive(node) {
        if (node.name.value === 'defer' || node.name.value === 'stream') directives.push(node);
      },
    });
    directivesOf.set(document, (found = directives));
  }
  return found;
}

/**
 * Whether the document's text may use `@defer` or `@stream`: only a text that names either at all
 * (a directive's name cannot be escaped) is walked.
 */
export function usesIncrementalDelivery(query: string, document: DocumentNode): boolean {
  if (!query.includes('defer') && !query.includes('stream')) return false;
  return incrementalDirectives(document).length > 0;
}

/** Whether one of the directives defers or streams with these variables (`if` is not false). */
function defersWith(directives: readonly DirectiveNode[], variables: Record<string, unknown> | undefined): boolean {
  return directives.some((directive) => {
    const condition = directive.arguments?.find((argument) => argument.name.value === 'if')?.value;
    if (condition === undefined) return true;
    if (condition.kind === Kind.BOOLEAN) return condition.value;
    return !(condition.kind === Kind.VARIABLE && variables?.[condition.name.value] === false);
  });
}

/**
 * Whether an Accept header lets yoga send a stream of results: it names multipart/mixed or
 * text/event-stream, or a range holding one of them, in UTF-8 (yoga's own rule,
 * `getMediaTypesForRequestInOrder`); no header is `*` / `*`.
 */
export function acceptsStreams(accept: string | null): boolean {
  for (const entry of (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [type = '', ...parameters] = entry.split(';');
    const charset = parameters.find((parameter) => parameter.includes('charset='));
    if (charset !== undefined && charset !== 'charset=utf-8') continue;
    const [main, sub] = type.split('/');
    if (main === '*' && sub === '*') return true;
    if (main === 'multipart' && (sub === '*' || sub === 'mixed')) return true;
    if (main === 'text' && (sub === '*' || sub === 'event-stream')) return true;
  }
  return false;
}

/** What the executor was called with, as far as the masking of parts reads it. */
type ExecutedWith = { contextValue: unknown; variableValues?: unknown; document: unknown };

/**
 * The secrets of the request an operation answers, as the redaction plugin finds them
 * (src/security/redaction.ts): its credentials, and the passwords (and fields named like a
 * secret) of its variables and document.
 */
function secretsOf(args: ExecutedWith): string[] {
  const request = (args.contextValue as { request?: { headers: HeaderSource } }).request;
  return [
    ...(request ? credentialSecrets(request.headers) : []),
    ...variableSecrets(args.variableValues),
    ...documentSecrets(args.document as DocumentNode),
  ];
}

/**
 * The refusal of an operation that would be answered in parts to a client that takes none, or
 * undefined when it may run: the client takes a stream, or no directive defers with these variables.
 */
function refusalOf(directives: readonly DirectiveNode[], args: ExecutedWith): { errors: GraphQLError[] } | undefined {
  const request = (args.contextValue as { request?: { headers: HeaderSource } }).request;
  if (request === undefined || acceptsStreams(request.headers.get('accept'))) return undefined;
  if (!defersWith(directives, args.variableValues as Record<string, unknown> | undefined)) return undefined;
  return {
    errors: [
      codedError(
        'INCREMENTAL_DELIVERY_NOT_ACCEPTED',
        'This operation uses @defer or @stream, whose answer comes in parts: send it with ' +
          '`Accept: multipart/mixed` or `Accept: text/event-stream`.',
        { status: 406, headers: { accept: 'multipart/mixed, text/event-stream' } },
      ),
    ],
  };
}

/**
 * An operation using `@defer` or `@stream` is refused, before it runs, to a client that takes no
 * stream ({@link refusalOf}); else the errors of its parts leave as those of a whole result do:
 * masked (an upstream failure with its code, anything unexpected as `Unexpected error.`, logged),
 * and cleared of the request's secrets (which the redaction plugin does for whole results only).
 */
function useIncrementalParts(options: IncrementalDeliveryOptions): Plugin {
  const maskPart = (part: IncrementalPart, args: ExecutedWith): IncrementalPart => {
    if (!part.errors?.length) return part;
    const secrets = secretsOf(args);
    const errors = part.errors.map((error) => {
      const masked = options.maskError(error, 'Unexpected error.');
      const original = replacedBy(masked);
      if (original !== undefined) options.logMasked(original, args.contextValue as object);
      const message = redact(masked.message, secrets);
      return message === masked.message ? masked : rebuilt(masked, { message });
    });
    return { ...part, errors };
  };
  return {
    // One hook for both, which leaves any other document alone, unwatched: each hook envelop runs
    // costs a share of every request.
    onExecute({ args, setResultAndStopExecution }) {
      const directives = incrementalDirectives(args.document as DocumentNode);
      if (directives.length === 0) return undefined;
      const refusal = refusalOf(directives, args);
      if (refusal !== undefined) {
        setResultAndStopExecution(refusal);
        return undefined;
      }
      return {
        onExecuteDone: (payload) =>
          handleStreamOrSingleExecutionResult(payload, ({ args, result, setResult }) => {
            const incremental = (result as { incremental?: readonly IncrementalPart[] }).incremental;
            if (!incremental?.some((part) => part.errors?.length)) return;
            // A subsequent payload of the executor, whose `incremental` envelop's result type does not name.
            const masked = { ...result, incremental: incremental.map((part) => maskPart(part, args)) };
            setResult(masked);
          }),
      };
    },
  };
}

/**
 * `@defer` and `@stream`, refused to clients that take no stream, with the errors of their parts
 * masked. The defer-stream plugin's directives are added here; its validation rules are added by
 * the gateway's validation plugin ({@link deferStreamValidation}), once per document: its own hook
 * filters every rule by name on each request.
 */
export function useIncrementalDelivery(options: IncrementalDeliveryOptions): Plugin[] {
  const { onSchemaChange } = useDeferStream();
  return [{ onSchemaChange }, useIncrementalParts(options)];
}

/** The defer-stream plugin's validation hook (it adds the rules of `@defer` and `@stream`), for useValidationRules. */
export function deferStreamValidation(): ValidateHook {
  const { onValidate } = useDeferStream();
  if (onValidate === undefined)
    throw new Error('the defer-stream plugin no longer validates: see src/plugins/incremental-delivery.ts');
  return onValidate;
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
