/**
 * Trusted documents (TRUSTED_DOCUMENTS): with a manifest, only its documents run, named by their
 * hash; anything else is refused with a stable code before it reaches an upstream. A manifest
 * that cannot be used stops the start with a ConfigError naming the setting.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/index.js';
import { createGateway } from '../src/gateway.js';
import { loadTrustedDocuments } from '../src/security/trusted-documents.js';
import { ALL_CREDENTIALS, startStack, testConfig, type Stack } from './helpers/stack.js';

const PET = 'query Pet($id: ID!) { pet(id: $id) { id name } }';
const INVENTORY = '{ inventory { entries { status } } }';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const directory = mkdtempSync(join(tmpdir(), 'trusted-documents-'));
function manifestFile(name: string, content: string): string {
  const file = join(directory, name);
  writeFileSync(file, content);
  return file;
}

const MANIFEST = manifestFile('manifest.json', JSON.stringify({ [sha256(PET)]: PET, [sha256(INVENTORY)]: INVENTORY }));

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ trustedDocuments: MANIFEST });
});
afterAll(() => stack?.close());

const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

describe('with a manifest', () => {
  it('runs a document of the manifest by its hash, with variables', async () => {
    const result = await stack.post({ extensions: persisted(sha256(PET)), variables: { id: '1' } });

    expect(result).toEqual({ status: 200, body: { data: { pet: { id: '1', name: 'Cat 1' } } } });
    expect(stack.upstream().map((request) => `${request.method} ${request.path}`)).toEqual(['GET /api/v3/pet/1']);
  });

  it('runs one by GET too (with the CSRF header GET needs)', async () => {
    const url = `${stack.url}?${new URLSearchParams({ extensions: JSON.stringify(persisted(sha256(INVENTORY))) })}`;
    const response = await fetch(url, {
      headers: { accept: 'application/json', 'x-graphql-csrf': '1', ...ALL_CREDENTIALS },
    });

    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ data: { inventory: { entries: expect.any(Array) } } });
    stack.upstream();
  });

  const required = {
    status: 400,
    body: {
      errors: [
        {
          message:
            'Only trusted documents run on this gateway: send extensions.persistedQuery { version: 1, sha256Hash } of a document in the manifest',
          extensions: { code: 'TRUSTED_DOCUMENT_REQUIRED' },
        },
      ],
    },
  };

  it.each([
    ['a document text', { query: '{ pet(id: 1) { id } }' }],
    ['the text of a document that is in the manifest', { query: PET, variables: { id: '1' } }],
    [
      'a hash together with a text',
      { query: '{ pet(id: 2) { id } }', extensions: persisted(sha256(PET)), variables: { id: '1' } },
    ],
    ['neither a text nor a hash', { variables: { id: '1' } }],
  ])('refuses %s with 400 TRUSTED_DOCUMENT_REQUIRED and calls no upstream', async (_, body) => {
    expect(await stack.post(body)).toEqual(required);
    expect(stack.upstream()).toEqual([]);
  });

  it('refuses an unknown hash with 400 TRUSTED_DOCUMENT_NOT_FOUND', async () => {
    expect(await stack.post({ extensions: persisted(sha256('{ pet(id: 1) { id } }')) })).toEqual({
      status: 400,
      body: {
        errors: [
          {
            message:
              'Unknown trusted document: send extensions.persistedQuery { version: 1, sha256Hash } of a document in the manifest',
            extensions: { code: 'TRUSTED_DOCUMENT_NOT_FOUND' },
          },
        ],
      },
    });
    expect(stack.upstream()).toEqual([]);
  });
});

describe('a manifest that cannot be used stops the start', () => {
  it.each([
    [
      'a missing file',
      join(directory, 'missing.json'),
      /^TRUSTED_DOCUMENTS must name a JSON manifest file, but it cannot be read: /,
    ],
    [
      'a file that is not JSON',
      manifestFile('broken.json', '{ "a": '),
      /^TRUSTED_DOCUMENTS must name a JSON manifest file, but it is not valid JSON: /,
    ],
    [
      'a JSON array',
      manifestFile('array.json', JSON.stringify([PET])),
      /^TRUSTED_DOCUMENTS must be a JSON object mapping each hash to its document$/,
    ],
    [
      'a document that is not a string',
      manifestFile('number.json', JSON.stringify({ abc: 1 })),
      /^TRUSTED_DOCUMENTS: the document of "abc" is not a string$/,
    ],
    [
      'a document that is not GraphQL',
      manifestFile('invalid.json', JSON.stringify({ abc: '{ pet(id: 1) { id }' })),
      /^TRUSTED_DOCUMENTS: the document of "abc" is not valid GraphQL$/,
    ],
  ])('%s', (_, file, message) => {
    expect(() => loadTrustedDocuments(file)).toThrow(ConfigError);
    expect(() => loadTrustedDocuments(file)).toThrow(message);
    expect(() =>
      createGateway(
        testConfig({
          petstoreUrl: 'http://127.0.0.1:1/api/v3',
          plantsUrl: 'http://127.0.0.1:1',
          trustedDocuments: file,
        }),
      ),
    ).toThrow(message);
  });
});
