/**
 * What each error code of the gateway (`extensions.code`) means to the person using the app.
 * The codes are the gateway's stable contract; the sentences are the app's own words. A code the
 * app does not know gets a general sentence, so that a new one never shows as a raw code.
 */
import type { Failure } from './client';

const SENTENCES: Record<string, string> = {
  UNAUTHENTICATED: 'The pet store needs you to sign in: enter your API key and token above.',
  FORBIDDEN: 'Your credentials are not allowed to do this.',
  NOT_FOUND: 'The pet store has no such thing: it may have been removed.',
  BAD_USER_INPUT: 'The pet store did not accept what you entered: check it and try again.',
  UPSTREAM_UNAVAILABLE: 'The pet store is not available at the moment.',
  UPSTREAM_TIMEOUT: 'The pet store took too long to answer.',
  UPSTREAM_RATE_LIMITED: 'The pet store has had too many requests from you.',
  RATE_LIMITED: 'You have sent too many requests.',
  UPSTREAM_ERROR: 'The pet store failed to answer properly.',
  TRUSTED_DOCUMENT_NOT_FOUND: 'This version of the app is no longer supported: reload the page.',
  TRUSTED_DOCUMENT_REQUIRED: 'This version of the app is no longer supported: reload the page.',
  NETWORK: 'The app cannot reach the server: check your connection.',
};

/** The sentence for one failure, with when to try again where the gateway says. */
export function sentence(failure: Failure): string {
  const text = SENTENCES[failure.code] ?? 'Something went wrong on our side.';
  if (failure.retryAfter !== undefined) return `${text} Try again in ${failure.retryAfter} seconds.`;
  if (failure.code.startsWith('UPSTREAM_') || failure.code === 'NETWORK') return `${text} Try again in a moment.`;
  return text;
}

/** The sentences of an answer's failures, each once. */
export function sentences(failures: readonly Failure[]): string[] {
  return [...new Set(failures.map(sentence))];
}
