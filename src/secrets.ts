/**
 * Secrets, in one place: which values of a request are secret (its credentials, as
 * `credentials.ts` reads them, and the passwords or tokens it sends in variables or in the
 * document), the fingerprint that stands for a caller's credentials where a key is needed (rate
 * limits, the response cache), and redaction, the one way a secret is taken out of a text before
 * it reaches a response or a log line.
 */
import { createHash } from 'node:crypto';
import { Kind, visit, type ArgumentNode, type DocumentNode, type ObjectFieldNode } from 'graphql';
import { CREDENTIAL_HEADERS, readCredentials, type HeaderSource } from './credentials.js';

/** What replaces a secret in a response or a log line. */
export const REDACTED = '[redacted]';

/**
 * Credentials shorter than this are not redacted: replacing "a" everywhere would garble every
 * message. (A password the request sent is redacted in responses whatever its length.)
 */
const MIN_SECRET_LENGTH = 4;

/** Field names whose values are secrets, at any depth of variables and in document literals. */
const SECRET_NAME =
  /^(password|passwd|secret|token|access_?token|refresh_?token|api_?key|authorization|credentials?)$/i;

/**
 * The credential values a request (or an upstream call) carries, as a message could echo them:
 * each credential header whole and, for `Bearer x`, the token alone.
 */
export function credentialSecrets(headers: HeaderSource): string[] {
  const secrets: string[] = [];
  const authorization = headers.get(CREDENTIAL_HEADERS.bearer);
  const apiKey = headers.get(CREDENTIAL_HEADERS.apiKey);
  if (authorization === null && apiKey === null) return secrets;
  const { bearer, apiKey: key } = readCredentials(headers);
  for (const value of [authorization, bearer, apiKey, key]) {
    if (value != null && value.length >= MIN_SECRET_LENGTH) secrets.push(value);
  }
  return secrets;
}

/** {@link credentialSecrets} of headers held as a record, as an upstream call has them. */
export function credentialSecretsOf(headers: Readonly<Record<string, string>> | undefined): string[] {
  return headers === undefined ? [] : credentialSecrets(sourceOf(headers));
}

/** Headers held as a record (any case), read as a {@link HeaderSource} reads them (lower-case names). */
function sourceOf(headers: Readonly<Record<string, string>>): HeaderSource {
  const byName = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return { get: (name) => byName.get(name) ?? null };
}

/**
 * What stands for a caller's credentials where a key is needed (a rate-limit bucket, a cache
 * session): a SHA-256 hash of them, so that the credential itself is never kept in memory or
 * sent to a shared store; undefined for a caller without any.
 */
export function credentialFingerprint(headers: HeaderSource): string | undefined {
  // One hash per request: the rate limiter and the response cache both ask for it.
  if (fingerprints.has(headers)) return fingerprints.get(headers);
  const { bearer, apiKey } = readCredentials(headers);
  const fingerprint =
    bearer === undefined && apiKey === undefined
      ? undefined
      : createHash('sha256')
          .update(`${bearer ?? ''}\n${apiKey ?? ''}`)
          .digest('base64url');
  fingerprints.set(headers, fingerprint);
  return fingerprint;
}
const fingerprints = new WeakMap<HeaderSource, string | undefined>();

/** {@link credentialFingerprint} of headers held as a record, as an upstream call has them. */
export function credentialFingerprintOf(headers: Readonly<Record<string, string>> | undefined): string | undefined {
  return headers === undefined ? undefined : credentialFingerprint(sourceOf(headers));
}

/** The secret values of a request's variables: strings in fields named like a secret (`password`, `token`, ...). */
export function variableSecrets(variables: unknown): string[] {
  const found: string[] = [];
  // A loop, not a recursion: variables are the caller's, nested as deep as it likes.
  const pending: unknown[] = [variables];
  for (let index = 0; index < pending.length; index++) {
    const value = pending[index];
    if (Array.isArray(value)) for (const item of value) pending.push(item);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (SECRET_NAME.test(key) && typeof item === 'string') found.push(item);
        else pending.push(item);
      }
    }
  }
  return found;
}

/**
 * The secrets written into a document: the string literals of arguments and input fields named
 * like a secret (`login(password: "…")`), found from its syntax tree, as they are and as
 * GraphQL's messages print them (escaped as JSON). Once per document: documents come from
 * yoga's parser cache, the same object for the same text.
 */
export function documentSecrets(document: DocumentNode): readonly string[] {
  let found = documentsSeen.get(document);
  if (found !== undefined) return found;
  const secrets: string[] = [];
  const literal = (node: ArgumentNode | ObjectFieldNode) => {
    if (node.value.kind !== Kind.STRING || !SECRET_NAME.test(node.name.value)) return;
    secrets.push(node.value.value);
    const printed = JSON.stringify(node.value.value).slice(1, -1);
    if (printed !== node.value.value) secrets.push(printed);
  };
  visit(document, { Argument: literal, ObjectField: literal });
  found = secrets;
  documentsSeen.set(document, found);
  return found;
}
const documentsSeen = new WeakMap<DocumentNode, readonly string[]>();

/** Deepest level {@link redactFields} copies (the most INPUT_MAX_DEPTH allows); below it, a value is redacted whole. */
const MAX_REDACTED_DEPTH = 500;

/**
 * A copy of `value` with every field named like a secret (`password`, `token`, `apiKey`, ...)
 * replaced by {@link REDACTED}, at any depth: for variables, whose shape a log cannot know.
 */
export function redactFields(value: unknown, depth = 0): unknown {
  if (typeof value !== 'object' || value === null) return value;
  // Variables deeper than INPUT_MAX_DEPTH are refused before they are logged; this bound is for any other caller.
  if (depth >= MAX_REDACTED_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redactFields(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, SECRET_NAME.test(key) ? REDACTED : redactFields(item, depth + 1)]),
  );
}

/** The secrets longest first, so that a token inside its "Bearer …" header is not redacted by halves. */
function longestFirst(secrets: readonly string[]): string[] {
  return [...new Set(secrets)].filter((secret) => secret !== '').sort((a, b) => b.length - a.length);
}

/** `text` with every one of `secrets` replaced by {@link REDACTED}: for a message. */
export function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of longestFirst(secrets)) if (result.includes(secret)) result = result.split(secret).join(REDACTED);
  return result;
}

const REGEXP_SPECIAL = /[.*+?^${}()|[\]\\]/g;

/**
 * A JSON line with each secret (from {@link MIN_SECRET_LENGTH} characters) replaced by
 * {@link REDACTED} wherever it appears in a string value, as JSON writes it there; not where a
 * backslash before it makes its first character part of an escape (`\n`, `\u…`), which
 * replacing would break. For a log line.
 */
export function redactJsonLine(line: string, secrets: readonly string[]): string {
  // Most lines hold no secret at all (a request's line does not, below debug): a plain search for
  // each, as JSON writes it, is far cheaper than ordering them and building patterns.
  const found: string[] = [];
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    const asWritten = JSON.stringify(secret).slice(1, -1);
    if (line.includes(asWritten)) found.push(asWritten);
  }
  if (found.length === 0) return line;
  let result = line;
  for (const asWritten of longestFirst(found)) {
    if (!result.includes(asWritten)) continue;
    const written = asWritten.replace(REGEXP_SPECIAL, '\\$&');
    result = result.replace(new RegExp(`(?<!(?:^|[^\\\\])(?:\\\\\\\\)*\\\\)${written}`, 'g'), REDACTED);
  }
  return result;
}
