/**
 * Trusted documents (persisted operations), an opt-in mode: with TRUSTED_DOCUMENTS set to a
 * manifest file, only the documents in it run, each named by its hash. A client sends
 * `{"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "<hash>"}}, "variables": …}`
 * (the format Apollo Client, Relay and GraphQL Code Generator's persisted documents use);
 * a document text, a missing hash or an unknown hash is refused.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { ConfigError } from '../config/index.js';
import type { ErrorCode } from '../errors.js';

/** The manifest: document text by hash. */
export type TrustedDocuments = ReadonlyMap<string, string>;

/**
 * Reads a manifest: a JSON object whose keys are hashes and whose values are documents. Every
 * document is parsed now, so a broken manifest stops the start instead of failing requests.
 * @throws ConfigError naming TRUSTED_DOCUMENTS and what is wrong
 */
export function loadTrustedDocuments(file: string): TrustedDocuments {
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = error instanceof SyntaxError ? 'it is not valid JSON' : 'it cannot be read';
    throw new ConfigError(`TRUSTED_DOCUMENTS must name a JSON manifest file, but ${reason}: ${file}`);
  }
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) {
    throw new ConfigError('TRUSTED_DOCUMENTS must be a JSON object mapping each hash to its document');
  }
  const documents = new Map<string, string>();
  for (const [hash, document] of Object.entries(manifest)) {
    if (typeof document !== 'string')
      throw new ConfigError(`TRUSTED_DOCUMENTS: the document of "${hash}" is not a string`);
    try {
      parse(document);
    } catch {
      throw new ConfigError(`TRUSTED_DOCUMENTS: the document of "${hash}" is not valid GraphQL`);
    }
    documents.set(hash, document);
  }
  return documents;
}

const HOW = 'send extensions.persistedQuery { version: 1, sha256Hash } of a document in the manifest';

/** The yoga plugin of trusted-documents mode: only the manifest's documents run, by hash. */
export function useTrustedDocuments(documents: TrustedDocuments): Plugin {
  // The plugin builds its errors from these options; the codes are checked against ErrorCode here.
  const refusal = (code: ErrorCode, message: string) => ({ message, extensions: { code, http: { status: 400 } } });
  const required = refusal('TRUSTED_DOCUMENT_REQUIRED', `Only trusted documents run on this gateway: ${HOW}`);
  const plugin = usePersistedOperations({
    getPersistedOperation: (hash) => documents.get(hash) ?? null,
    allowArbitraryOperations: false,
    customErrors: {
      persistedQueryOnly: required,
      keyNotFound: required,
      notFound: refusal('TRUSTED_DOCUMENT_NOT_FOUND', `Unknown trusted document: ${HOW}`),
    },
  });
  return plugin;
}

/**
 * The document a request's parameters name by hash, when they name one of the manifest's and
 * carry no document text; undefined otherwise (yoga refuses those). The hash is read as yoga's
 * persisted-operations plugin reads it: `extensions.persistedQuery` of version 1.
 */
export function trustedDocument(
  documents: TrustedDocuments,
  params: { query?: unknown; extensions?: unknown },
): string | undefined {
  if (params.query != null || typeof params.extensions !== 'object' || params.extensions === null) return undefined;
  const persisted = (params.extensions as { persistedQuery?: unknown }).persistedQuery;
  if (typeof persisted !== 'object' || persisted === null) return undefined;
  const { version, sha256Hash } = persisted as { version?: unknown; sha256Hash?: unknown };
  return version === 1 && typeof sha256Hash === 'string' ? documents.get(sha256Hash) : undefined;
}
