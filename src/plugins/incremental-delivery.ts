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
import type { ValidateCheck, ValidateHook } from '../security/query-limits.js';
import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import {
  getOperationAST,
  Kind,
  visit,
  type DirectiveNode,
  type DocumentNode,
  type GraphQLError,
  type GraphQLSchema,
} from 'graphql';
import type { HeaderSource } from '../credentials.js';
import { codedError, rebuilt, replacedBy } from '../errors.js';
import { credentialSecrets, documentSecrets, redact, variableSecrets } from '../secrets.js';

/** What the incremental delivery plugins are built with. */
export type IncrementalDeliveryOptions = {
  /** yoga's `maskedErrors.maskError`: applied to the errors of every deferred or streamed part */
  maskError: (error: unknown, message: string) => GraphQLError;
  /**
   * logs an error the masking replaced (an unexpected one keeps its stack, server-side), as a line
   * of the request it answers when that is known
   */
  logMasked: (error: unknown, request: Request | undefined) => void;
  /** the secrets of a request being served, as its record gathered them (credentials, variables, document) */
  secretsOf: (request: Request) => readonly string[];
};

/** One part of an incremental result, as the executor makes it: a deferred fragment's data or streamed items. */
type IncrementalPart = { errors?: readonly GraphQLError[] } & Record<string, unknown>;

/** The `@defer` and `@stream` directives of each document, by the document yoga's parser cache hands out once per text. */
const directivesOf = new WeakMap<DocumentNode, readonly DirectiveNode[]>();

/** The `@defer` and `@stream` directives a document holds (found once per parsed document). */
function incrementalDirectives(document: DocumentNode): readonly DirectiveNode[] {
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

/**
 * Whether one of the directives defers or streams with these variables, as sent (`if` is not
 * false): a variable not sent has the default its definition gives, else `if`'s own (true).
 */
function defersWith(
  directives: readonly DirectiveNode[],
  variables: Record<string, unknown> | null | undefined,
  operation: { variableDefinitions?: readonly { variable: { name: { value: string } }; defaultValue?: unknown }[] },
): boolean {
  return directives.some((directive) => {
    const condition = directive.arguments?.find((argument) => argument.name.value === 'if')?.value;
    if (condition === undefined) return true;
    if (condition.kind === Kind.BOOLEAN) return condition.value;
    if (condition.kind !== Kind.VARIABLE) return true;
    const name = condition.name.value;
    if (variables?.[name] !== undefined) return variables[name] !== false;
    const fallback = operation.variableDefinitions?.find((definition) => definition.variable.name.value === name);
    const given = fallback?.defaultValue as { kind?: string; value?: unknown } | undefined;
    return !(given?.kind === Kind.BOOLEAN && given.value === false);
  });
}

/**
 * Whether an Accept header lets yoga send a stream of results: it names multipart/mixed or
 * text/event-stream, or a range holding one of them, in UTF-8 (yoga's own rule,
 * `getMediaTypesForRequestInOrder`); no header is `*` / `*`.
 */
function acceptsStreams(accept: string | null): boolean {
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
type ExecutedWith = { contextValue?: unknown; variableValues?: unknown; document: unknown };

/**
 * The secrets of the request an operation answers, as the redaction plugin finds them
 * (src/security/redaction.ts): its credentials, and the passwords (and fields named like a
 * secret) of its variables and document.
 */
function secretsOf(args: ExecutedWith): string[] {
  const request = (args.contextValue as { request?: { headers: HeaderSource } } | undefined)?.request;
  return [
    ...(request ? credentialSecrets(request.headers) : []),
    ...variableSecrets(args.variableValues),
    ...documentSecrets(args.document as DocumentNode),
  ];
}

/**
 * Refuses, before it runs, an operation that would be answered in parts to a client that takes
 * none: a check of useValidationRules (src/security/query-limits.ts), which runs it for each
 * request, before the document's kept result, and never keeps what it says. Made while
 * validating, not as the operation executes: an onExecute hook costs every request a share of
 * envelop's promise stand-ins (docs/architecture.md, "One request pipeline").
 */
export const refuseUnacceptedStreams: ValidateCheck = ({ params, context }) => {
  const document = params.documentAST as DocumentNode;
  const directives = incrementalDirectives(document);
  if (directives.length === 0) return undefined;
  const { request, params: sent } = context as {
    request?: { headers: HeaderSource };
    params?: { variables?: Record<string, unknown> | null; operationName?: string | null };
  };
  if (request === undefined || acceptsStreams(request.headers.get('accept'))) return undefined;
  const operation = getOperationAST(document, sent?.operationName ?? undefined) ?? {};
  if (!defersWith(directives, sent?.variables, operation)) return undefined;
  return [
    codedError(
      'INCREMENTAL_DELIVERY_NOT_ACCEPTED',
      'This operation uses @defer or @stream, whose answer comes in parts: send it with ' +
        '`Accept: multipart/mixed` or `Accept: text/event-stream`.',
      { status: 406, headers: { accept: 'multipart/mixed, text/event-stream' }, spec: false },
    ),
  ];
};

/**
 * A stream of results whose parts' errors leave as those of a whole result do: masked (an
 * upstream failure with its code, anything unexpected as `Unexpected error.`, logged), and
 * cleared of the request's `secrets` (which the redaction plugin does for whole results only).
 */
export function maskedParts(
  stream: AsyncIterable<unknown>,
  options: Pick<IncrementalDeliveryOptions, 'maskError'>,
  secrets: () => readonly string[],
  logMasked: (error: unknown) => void,
): AsyncIterable<unknown> {
  const maskPart = (part: IncrementalPart): IncrementalPart => {
    if (!part.errors?.length) return part;
    const cleared = secrets();
    const errors = part.errors.map((error) => {
      const masked = options.maskError(error, 'Unexpected error.');
      const original = replacedBy(masked);
      if (original !== undefined) logMasked(original);
      const message = redact(masked.message, cleared);
      return message === masked.message ? masked : rebuilt(masked, { message });
    });
    return { ...part, errors };
  };
  return mapAsyncIterator(stream as AsyncIterableIterator<unknown>, (result) => {
    // A subsequent payload of the executor: its deferred fragments' data and streamed items.
    const incremental = (result as { incremental?: readonly IncrementalPart[] } | null)?.incremental;
    if (!incremental?.some((part) => part.errors?.length)) return result;
    return { ...(result as object), incremental: incremental.map(maskPart) };
  });
}

/**
 * The errors of the parts of a streamed answer (one whose operation uses `@defer` or `@stream`)
 * masked ({@link maskedParts}) as the answer leaves: any other result is left alone. (The HTTP
 * lane never serves such an operation, and calls this hook for its own results as yoga would.)
 */
function useIncrementalParts(options: IncrementalDeliveryOptions): Plugin {
  return {
    onResultProcess(payload) {
      const { request, result } = payload;
      if (!isAsyncIterable(result)) return;
      const secrets = () => options.secretsOf(request);
      payload.setResult(maskedParts(result, options, secrets, (error) => options.logMasked(error, request)) as never);
    },
  };
}

/**
 * The masking of {@link maskedParts} for an operation executed outside yoga's request hooks (the
 * WebSocket transport), with the secrets of what it was executed with.
 */
export function maskedOperationParts(
  stream: AsyncIterable<unknown>,
  args: ExecutedWith,
  options: IncrementalDeliveryOptions,
): AsyncIterable<unknown> {
  return maskedParts(
    stream,
    options,
    () => secretsOf(args),
    (error) => options.logMasked(error, undefined),
  );
}

/**
 * `@defer` and `@stream`, with the errors of their parts masked. The defer-stream plugin's
 * directives are added here; its validation rules are added by the gateway's validation plugin
 * ({@link deferStreamValidation}), once per document (its own hook filters every rule by name on
 * each request), and that plugin refuses them to clients that take no stream
 * ({@link refuseUnacceptedStreams}).
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
