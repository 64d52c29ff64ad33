/**
 * Automatic persisted queries (Apollo's APQ protocol), on by default: an unknown hash is
 * answered PERSISTED_QUERY_NOT_FOUND, a document sent with its hash is checked and kept, and the
 * hash alone runs it after, by POST or GET. APQ=false answers PERSISTED_QUERY_NOT_SUPPORTED;
 * with TRUSTED_DOCUMENTS nothing a client sends is kept.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_CREDENTIALS, expectedGet, summary, useStack } from './helpers/stack.js';

const PET = 'query Pet($id: ID!) { pet(id: $id) { id name } }';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (document: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(document) } });

/** The single error a refused request is answered with. */
const refusal = (code: string, message: string) => ({ errors: [{ message, extensions: { code } }] });

describe('APQ, on by default', () => {
  const stack = useStack();

  it('answers an unknown hash with 404 PERSISTED_QUERY_NOT_FOUND, calling no upstream', async () => {
    const answer = await stack.post({ variables: { id: '1' }, extensions: persisted(PET) });

    expect(answer).toEqual({ status: 404, body: refusal('PERSISTED_QUERY_NOT_FOUND', 'PersistedQueryNotFound') });
    expect(stack.upstream()).toEqual([]);
  });

  it('runs a document sent with its hash, then runs it by hash alone', async () => {
    const registered = await stack.post({ query: PET, variables: { id: '1' }, extensions: persisted(PET) });
    const byHash = await stack.post({ variables: { id: '2' }, extensions: persisted(PET) });

    expect(registered).toEqual({ status: 200, body: { data: { pet: { id: '1', name: 'Cat 1' } } } });
    expect(byHash).toEqual({ status: 200, body: { data: { pet: { id: '2', name: 'Cat 2' } } } });
    expect(stack.upstream().map(summary)).toEqual([
      expectedGet('/api/v3/pet/1', 'api_key'),
      expectedGet('/api/v3/pet/2', 'api_key'),
    ]);
  });

  it('runs a registered hash sent by GET, the extensions in the query string, with the CSRF rules of any GET', async () => {
    const document = '{ pet(id: 3) { name } }';
    await stack.post({ query: document, extensions: persisted(document) });
    stack.upstream();
    const url = new URL(stack.url);
    url.searchParams.set('extensions', JSON.stringify(persisted(document)));
    const get = async (headers: Record<string, string>) => {
      const response = await fetch(url, {
        headers: { accept: 'application/graphql-response+json', ...ALL_CREDENTIALS, ...headers },
      });
      return { status: response.status, body: (await response.json()) as unknown };
    };

    const withoutCsrfHeader = await get({});
    const withCsrfHeader = await get({ 'apollo-require-preflight': 'true' });

    expect(withoutCsrfHeader).toMatchObject({
      status: 403,
      body: { errors: [{ extensions: { code: 'CSRF_HEADER_REQUIRED' } }] },
    });
    expect(withCsrfHeader).toEqual({ status: 200, body: { data: { pet: { name: 'Cat 3' } } } });
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/3', 'api_key')]);
  });

  it('refuses a document whose hash is not the one sent with it (400 PERSISTED_QUERY_MISMATCH) and keeps nothing', async () => {
    const other = '{ pet(id: 4) { name } }';

    const mismatch = await stack.post({ query: PET, variables: { id: '1' }, extensions: persisted(other) });
    const later = await stack.post({ extensions: persisted(other) });

    expect(mismatch).toEqual({ status: 400, body: refusal('PERSISTED_QUERY_MISMATCH', 'PersistedQueryMismatch') });
    expect(later).toEqual({ status: 404, body: refusal('PERSISTED_QUERY_NOT_FOUND', 'PersistedQueryNotFound') });
    expect(stack.upstream()).toEqual([]);
  });
});

describe('APQ=false', () => {
  const stack = useStack({ apq: false });

  it('answers a hash with 400 PERSISTED_QUERY_NOT_SUPPORTED, and documents still run', async () => {
    const byHash = await stack.post({ query: PET, variables: { id: '1' }, extensions: persisted(PET) });
    const plain = await stack.post({ query: PET, variables: { id: '1' } });

    expect(byHash).toEqual({
      status: 400,
      body: refusal('PERSISTED_QUERY_NOT_SUPPORTED', 'PersistedQueryNotSupported'),
    });
    expect(plain).toEqual({ status: 200, body: { data: { pet: { id: '1', name: 'Cat 1' } } } });
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/1', 'api_key')]);
  });
});

describe('APQ with TRUSTED_DOCUMENTS', () => {
  const INVENTORY = '{ inventory { entries { status } } }';
  const manifest = join(mkdtempSync(join(tmpdir(), 'apq-trusted-')), 'manifest.json');
  writeFileSync(manifest, JSON.stringify({ [sha256(INVENTORY)]: INVENTORY }));
  const stack = useStack({ trustedDocuments: manifest });

  it('registers nothing: a document sent with its hash is refused, and so is its hash after', async () => {
    const register = await stack.post({ query: PET, variables: { id: '1' }, extensions: persisted(PET) });
    const byHash = await stack.post({ variables: { id: '1' }, extensions: persisted(PET) });

    expect(register.status).toBe(400);
    expect(register.body).toMatchObject({ errors: [{ extensions: { code: 'TRUSTED_DOCUMENT_REQUIRED' } }] });
    expect(byHash.status).toBe(400);
    expect(byHash.body).toMatchObject({ errors: [{ extensions: { code: 'TRUSTED_DOCUMENT_NOT_FOUND' } }] });
    expect(stack.upstream()).toEqual([]);
  });
});
