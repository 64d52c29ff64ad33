/**
 * The last pass over the errors a response carries.
 * - Credential hygiene: every message is cleared of the request's secrets (its bearer token, its
 *   api_key, and any password, or other field named like a secret, it sent). The gateway builds its own errors without
 * them; this
 *   catches the messages it does not write, such as GraphQL's
 *   "Variable "$input" got invalid value { password: … }", which quotes the value it refused.
 * - That same kind of error, the one request error GraphQL sends without a code, gets one.
 */
import type { Plugin } from 'graphql-yoga';
import type { GraphQLError } from 'graphql';
import { rebuilt } from '../errors.js';
import { redact } from '../secrets.js';

function redactError(error: GraphQLError, secrets: readonly string[]): GraphQLError {
  const message = redact(error.message, secrets);
  if (message === error.message) return error;
  return rebuilt(error, { message });
}

type Result = { errors?: readonly GraphQLError[] };

function isResult(value: unknown): value is Result {
  return typeof value === 'object' && value !== null && !(Symbol.asyncIterator in value);
}

/** True when a result, or a result of a batch, carries an error (a stream: always, it is not looked into here). */
function hasErrors(result: unknown): boolean {
  if (Array.isArray(result)) return result.some(hasErrors);
  return !isResult(result) || (result.errors?.length ?? 0) > 0;
}

/** Applies `change` to every error of a result or a batch of results (a stream is left alone). */
function mapErrors<R>(result: R, change: (error: GraphQLError) => GraphQLError): R {
  const one = (value: unknown) =>
    isResult(value) && value.errors ? { ...value, errors: value.errors.map(change) } : value;
  if (Array.isArray(result)) return result.map(one) as R;
  return one(result) as R;
}

/** A result whose error messages are cleared of `secrets`. */
function redactResult<R>(result: R, secrets: readonly string[]): R {
  if (secrets.length === 0) return result;
  return mapErrors(result, (error) => redactError(error, secrets));
}

/**
 * GraphQL's refusal of a variable's value ("Variable "$id" got invalid value …") is the one
 * request error that comes without a code; it gets BAD_USER_INPUT like every other bad argument,
 * and HTTP 400: nothing ran.
 */
function codeVariableErrors<R>(result: R): R {
  return mapErrors(result, (error) =>
    error.extensions['code'] === undefined && error.path === undefined && error.message.startsWith('Variable "$')
      ? rebuilt(error, { extensions: { ...error.extensions, code: 'BAD_USER_INPUT', http: { status: 400 } } })
      : error,
  );
}

/**
 * The yoga plugin that clears the request's secrets from every error of the response, request
 * errors included. (The log does the same for its lines: `src/observability/logger.ts`.) The
 * secrets are those the request's record gathered (`secretsOf`): its credentials, and the
 * passwords (and other fields named like a secret) its variables and document sent.
 */
export function useSecretRedaction(secretsOf: (request: Request) => readonly string[]): Plugin {
  return {
    onResultProcess(payload) {
      // Most results carry no error: nothing to redact, and the secrets need not be gathered.
      if (!hasErrors(payload.result)) return;
      payload.setResult(redactResult(payload.result, secretsOf(payload.request)));
    },
  };
}

/** The yoga plugin of {@link codeVariableErrors}. */
export function useVariableErrorCode(): Plugin {
  return {
    onResultProcess(payload) {
      payload.setResult(codeVariableErrors(payload.result));
    },
  };
}
