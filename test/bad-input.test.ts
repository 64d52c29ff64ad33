/**
 * The bad-input battery: hostile and broken requests sent over HTTP to a running gateway (on the
 * emulator). Each one gets a clear 4xx, or a GraphQL error, with a stable `extensions.code`; the
 * upstream receives nothing it should not; and the gateway answers the next good request.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { multipartBody, postMultipart, uploadParts } from './helpers/multipart.js';
import { ALL_CREDENTIALS, startStack, useStack, type Stack } from './helpers/stack.js';

const stack = useStack();

const ACCEPT = 'application/graphql-response+json, application/json';
const GOOD = '{ pet(id: 1) { id name } }';

/** What the gateway answered, its body read as JSON when it is JSON. */
type Answer = {
  status: number;
  headers: Headers;
  body: { data?: unknown; errors?: { message: string; path?: unknown; extensions?: { code?: unknown } }[] } | string;
};

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  try {
    return { status: response.status, headers: response.headers, body: JSON.parse(text) as Answer['body'] };
  } catch {
    return { status: response.status, headers: response.headers, body: text };
  }
}

/** A POST to the gateway with this body and content type (and any extra headers). */
async function post(
  body: string | Buffer,
  contentType: string | undefined,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const bytes = typeof body === 'string' ? body : new Uint8Array(body);
  return answer(
    await fetch(stack.url, {
      method: 'POST',
      headers: { accept: ACCEPT, ...(contentType ? { 'content-type': contentType } : {}), ...headers },
      body: bytes,
    }),
  );
}

/** A JSON POST of one operation. */
function postQuery(
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return post(JSON.stringify({ query, variables }), 'application/json', { ...ALL_CREDENTIALS, ...headers });
}

/** A GET of one operation (with the CSRF header, which GET requests need). */
async function get(
  params: Record<string, string>,
  headers: Record<string, string> = { 'x-graphql-csrf': '1' },
): Promise<Answer> {
  return answer(
    await fetch(`${stack.url}?${new URLSearchParams(params)}`, {
      headers: { accept: ACCEPT, ...ALL_CREDENTIALS, ...headers },
    }),
  );
}

/** The `extensions.code` of each error of an answer. */
function codes(result: Answer): unknown[] {
  return typeof result.body === 'string'
    ? [`not JSON: ${result.body.slice(0, 80)}`]
    : (result.body.errors ?? []).map((error) => error.extensions?.code);
}

/** After a bad request, the gateway still answers a good one, and the upstream sees only that one. */
async function expectNextGoodRequestAnswered(): Promise<void> {
  expect(stack.upstream()).toEqual([]);
  const result = await stack.gql(GOOD, {}, ALL_CREDENTIALS);
  expect(result).toEqual({ status: 200, data: { pet: { id: '1', name: 'Cat 1' } } });
  expect(stack.upstream().map((request) => `${request.method} ${request.path}`)).toEqual(['GET /api/v3/pet/1']);
}

/** Fields of Pet, for queries that need a non-trivial selection. */
const PET_FIELDS = 'fragment P on Pet { id name photoUrls status category { id name } tags { id name } }';

type Case = {
  /** sends the bad request */
  send: () => Promise<Answer>;
  status: number;
  /** the codes of the errors, in order */
  codes: string[];
};

const cases: Record<string, Case> = {
  'malformed JSON': {
    send: () => post('{"query": "{ pet(id: 1) { id } }"', 'application/json', ALL_CREDENTIALS),
    status: 400,
    codes: ['BAD_REQUEST'],
  },
  // The GraphQL-over-HTTP spec: a body that cannot be parsed SHOULD be a 400 under application/json too.
  'malformed JSON, accepting only application/json': {
    send: () => post('{"query": ', 'application/json', { ...ALL_CREDENTIALS, accept: 'application/json' }),
    status: 400,
    codes: ['BAD_REQUEST'],
  },
  'a JSON body that is not an object': {
    send: () => post('"{ pet(id: 1) { id } }"', 'application/json', ALL_CREDENTIALS),
    status: 400,
    codes: ['BAD_REQUEST'],
  },
  'a JSON object without a query': {
    send: () => post('{"variables": {}}', 'application/json', ALL_CREDENTIALS),
    status: 400,
    codes: ['BAD_REQUEST'],
  },
  'an empty body': { send: () => post('', 'application/json', ALL_CREDENTIALS), status: 400, codes: ['BAD_REQUEST'] },
  'a body that is not UTF-8': {
    // Latin-1 "é" (0xE9) where UTF-8 needs two bytes: a lenient decoder would turn it into U+FFFD and run the query.
    send: () =>
      post(
        Buffer.concat([
          Buffer.from('{"query":"{ user(username: \\"jos'),
          Buffer.from([0xe9]),
          Buffer.from('\\") { username } }"}'),
        ]),
        'application/json',
        ALL_CREDENTIALS,
      ),
    status: 400,
    codes: ['BAD_REQUEST'],
  },
  'a content type that carries no GraphQL (application/xml)': {
    send: () =>
      post('<query>{ pet(id: 1) { id } }</query>', 'application/xml', { ...ALL_CREDENTIALS, 'x-graphql-csrf': '1' }),
    status: 415,
    codes: ['UNSUPPORTED_MEDIA_TYPE'],
  },
  'JSON sent as text/plain (with the CSRF header)': {
    send: () => post(JSON.stringify({ query: GOOD }), 'text/plain', { ...ALL_CREDENTIALS, 'x-graphql-csrf': '1' }),
    status: 415,
    codes: ['UNSUPPORTED_MEDIA_TYPE'],
  },
  'a huge query string (2 MB)': {
    send: () => postQuery(`{ pet(id: 1) { id } ${' '.repeat(2 * 1024 * 1024)} }`),
    status: 413,
    codes: ['PAYLOAD_TOO_LARGE'],
  },
  'a body that declares a huge Content-Length': {
    // Refused from the header alone, before a byte of the body is read (only its first bytes are ever sent).
    send: () =>
      new Promise<Answer>((resolve, reject) => {
        const outgoing = request(stack.url, {
          method: 'POST',
          agent: false,
          headers: { 'content-type': 'application/json', accept: ACCEPT, 'content-length': String(50 * 1024 * 1024) },
        });
        outgoing.on('response', (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('end', () => {
            outgoing.destroy();
            resolve({
              status: incoming.statusCode ?? 0,
              headers: new Headers(),
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['body'],
            });
          });
        });
        outgoing.on('error', reject);
        outgoing.write('{"query": "');
      }),
    status: 413,
    codes: ['PAYLOAD_TOO_LARGE'],
  },
  'a query of 2500 tokens in a GET URL': {
    send: () => get({ query: `{ ${'a '.repeat(2500)}}` }),
    status: 400,
    codes: ['TOO_MANY_TOKENS'],
  },
  'deep nesting (12 levels of introspection types)': {
    send: () =>
      postQuery(
        '{ __type(name: "Pet") { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } }',
      ),
    status: 400,
    codes: ['QUERY_TOO_DEEP'],
  },
  'deep nesting (inline fragments on Query)': {
    send: () => postQuery(`{ ${'... on Query { '.repeat(12)} pet(id: 1) { id } ${'} '.repeat(12)} }`),
    status: 400,
    codes: ['QUERY_TOO_DEEP'],
  },
  'an alias bomb (60 aliases of pet)': {
    send: () => postQuery(`{ ${Array.from({ length: 60 }, (_, index) => `p${index}: pet(id: 1) { id }`).join(' ')} }`),
    status: 400,
    codes: ['TOO_MANY_ALIASES'],
  },
  'an alias bomb too large to parse (10 000 aliases)': {
    send: () =>
      postQuery(`{ ${Array.from({ length: 10_000 }, (_, index) => `p${index}: pet(id: 1) { id }`).join(' ')} }`),
    status: 400,
    codes: ['TOO_MANY_TOKENS'],
  },
  'a fragment cycle': {
    send: () =>
      postQuery(
        '{ pet(id: 1) { ...A } } fragment A on Pet { tags { name } ...B } fragment B on Pet { category { name } ...A }',
      ),
    status: 400,
    codes: ['GRAPHQL_VALIDATION_FAILED'],
  },
  'a directive flood (30 directives)': {
    send: () =>
      postQuery(
        `{ ${Array.from({ length: 30 }, (_, index) => `t${index}: __typename @include(if: true)`).join(' ')} pet(id: 1) { id } }`,
      ),
    status: 400,
    codes: ['TOO_MANY_DIRECTIVES'],
  },
  'a directive repeated on one field': {
    send: () => postQuery(`{ pet(id: 1) @include(if: true) @include(if: true) { id } }`),
    status: 400,
    codes: ['GRAPHQL_VALIDATION_FAILED'],
  },
  'a query over the cost budget (20 × pets with every field)': {
    // Each costs 55.25: pets 2, and 1.5 × the spread of P (1 + 1.5 × (2 + 1.5 × 14)).
    send: () => postQuery(`{ ${'pets(ids: [1]) { ...P } '.repeat(20)} } ${PET_FIELDS}`),
    status: 400,
    codes: ['QUERY_TOO_COSTLY'],
  },
  'an invalid variable (an object for an ID)': {
    send: () => postQuery('query ($id: ID!) { pet(id: $id) { id } }', { id: { $gt: 0 } }),
    status: 400,
    codes: ['BAD_USER_INPUT'],
  },
  'a missing required variable': {
    send: () => postQuery('query ($id: ID!) { pet(id: $id) { id } }', {}),
    status: 400,
    codes: ['BAD_USER_INPUT'],
  },
  'variables that are not an object': {
    send: () => post(JSON.stringify({ query: GOOD, variables: [1] }), 'application/json', ALL_CREDENTIALS),
    status: 400,
    codes: ['BAD_REQUEST'],
  },
  'variables in a GET URL that are not JSON': {
    send: () => get({ query: 'query ($id: ID!) { pet(id: $id) { id } }', variables: '{id: 1' }),
    status: 400,
    codes: ['BAD_REQUEST'],
  },
  'an enum value that does not exist (a literal)': {
    send: () => postQuery('{ petsByStatus(status: [ADOPTED]) { id } }'),
    status: 400,
    codes: ['GRAPHQL_VALIDATION_FAILED'],
  },
  'an enum value in its REST spelling (a variable)': {
    send: () =>
      postQuery('query ($status: [PetStatus!]!) { petsByStatus(status: $status) { id } }', { status: ['available'] }),
    status: 400,
    codes: ['BAD_USER_INPUT'],
  },
  'an unknown field': {
    send: () => postQuery('{ pet(id: 1) { id password } }'),
    status: 400,
    codes: ['GRAPHQL_VALIDATION_FAILED'],
  },
  'a batch (a JSON array of operations)': {
    send: () => post(JSON.stringify([{ query: GOOD }, { query: GOOD }]), 'application/json', ALL_CREDENTIALS),
    status: 400,
    codes: ['BAD_REQUEST'],
  },
  'a list argument over the limit (101 ids)': {
    send: () =>
      postQuery('query ($ids: [ID!]!) { pets(ids: $ids) { id } }', {
        ids: Array.from({ length: 101 }, (_, index) => String(index + 1)),
      }),
    status: 200,
    codes: ['BAD_USER_INPUT'],
  },
  'a federation representation of a type the subgraph does not have': {
    send: () =>
      postQuery(
        '{ _entities(representations: [{ __typename: "Pet", id: "1" }, { __typename: "Secret", id: "1" }]) { ... on Pet { id } } }',
      ),
    status: 200,
    codes: ['BAD_USER_INPUT'],
  },
  'a GET mutation': {
    send: () => get({ query: 'mutation { deletePet(id: 1) }' }),
    status: 405,
    codes: ['BAD_REQUEST'],
  },
  'a CSRF-less browser POST (an HTML form)': {
    send: () =>
      post(
        new URLSearchParams({ query: 'mutation { deletePet(id: 1) }' }).toString(),
        'application/x-www-form-urlencoded',
        ALL_CREDENTIALS,
      ),
    status: 403,
    codes: ['CSRF_HEADER_REQUIRED'],
  },
  'a CSRF-less browser POST (text/plain, as a form with enctype text/plain sends it)': {
    send: () => post(JSON.stringify({ query: 'mutation { deletePet(id: 1) }' }), 'text/plain', ALL_CREDENTIALS),
    status: 403,
    codes: ['CSRF_HEADER_REQUIRED'],
  },
  'a CSRF-less GET': { send: () => get({ query: GOOD }, {}), status: 403, codes: ['CSRF_HEADER_REQUIRED'] },
  'a PUT': {
    send: async () =>
      answer(
        await fetch(stack.url, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', accept: ACCEPT },
          body: JSON.stringify({ query: GOOD }),
        }),
      ),
    status: 405,
    codes: ['BAD_REQUEST'],
  },
};

describe('each bad request gets a coded 4xx or GraphQL error, reaches no upstream, and the next request is answered', () => {
  it.each(Object.keys(cases))('%s', async (name) => {
    const bad = cases[name];
    if (!bad) throw new Error(`no case ${name}`);

    const result = await bad.send();

    expect({ status: result.status, codes: codes(result) }).toEqual({ status: bad.status, codes: bad.codes });
    await expectNextGoodRequestAnswered();
  });
});

describe('a body that is not JSON', () => {
  it("is answered 400 with the gateway's message alone: nothing of the parser's error, no stack", async () => {
    const result = await post('{"query": ', 'application/json', { ...ALL_CREDENTIALS, accept: 'application/json' });

    expect(result.status).toBe(400);
    expect(result.headers.get('content-type')).toMatch(/^application\/json/);
    expect(result.body).toEqual({
      errors: [{ message: 'POST body sent invalid JSON.', extensions: { code: 'BAD_REQUEST' } }],
    });
    expect(stack.upstream()).toEqual([]);
  });
});

describe('ids', () => {
  it.each([
    ['non-numeric', '"abc"', 'abc'],
    ['with a sign and spaces', '" 12"', ' 12'],
    ['overflowing int64 by one', '"9223372036854775808"', '9223372036854775808'],
    ['a huge integer literal', '92233720368547758089223372036854775808', '92233720368547758089223372036854775808'],
    ['a float literal', '1.5', undefined],
  ])('a %s id is BAD_USER_INPUT or a validation error, with no upstream call', async (_, literal, shown) => {
    const result = await postQuery(`{ pet(id: ${literal}) { id } }`);

    if (shown === undefined) {
      expect({ status: result.status, codes: codes(result) }).toEqual({
        status: 400,
        codes: ['GRAPHQL_VALIDATION_FAILED'],
      });
    } else {
      expect(result.status).toBe(200);
      expect(result.body).toEqual({
        data: { pet: null },
        errors: [
          expect.objectContaining({
            message: `id must be an integer from -9223372036854775808 to 9223372036854775807, got "${shown}"`,
            path: ['pet'],
            extensions: { code: 'BAD_USER_INPUT' },
          }),
        ],
      });
    }
    await expectNextGoodRequestAnswered();
  });

  it('a bad id among good ones in pets(ids) fails the field before any call', async () => {
    const result = await postQuery('{ pets(ids: [1, 2, "two"]) { id } }');

    expect({ status: result.status, codes: codes(result) }).toEqual({ status: 200, codes: ['BAD_USER_INPUT'] });
    await expectNextGoodRequestAnswered();
  });
});

describe('an oversized upload', () => {
  it('fails with 413 PAYLOAD_TOO_LARGE, the upstream never gets the whole file, and the gateway goes on', async () => {
    const small: Stack = await startStack({ uploadMaxBytes: 1024 }, stack.emulator);
    try {
      const upload = uploadParts(
        { query: 'mutation ($file: File!) { uploadPetImage(petId: 1, file: $file) { code } }', variables: {} },
        { filename: 'big.png', contentType: 'image/png', content: Buffer.alloc(64 * 1024, 7) },
      );

      const result = await postMultipart(small.url, multipartBody(upload), { headers: ALL_CREDENTIALS });

      expect({ status: result.status, codes: result.errors?.map((error) => error.extensions?.['code']) }).toEqual({
        status: 413,
        codes: ['PAYLOAD_TOO_LARGE'],
      });
      // The upload may have started streaming upstream; it was aborted, never completed.
      expect(stack.upstream().filter((request) => request.complete)).toEqual([]);
      expect(await small.gql(GOOD, {}, ALL_CREDENTIALS)).toEqual({
        status: 200,
        data: { pet: { id: '1', name: 'Cat 1' } },
      });
    } finally {
      await small.close();
    }
  });

  it('without the CSRF header is refused with 403 before anything is read or sent', async () => {
    const upload = uploadParts(
      { query: 'mutation ($file: File!) { uploadPetImage(petId: 1, file: $file) { code } }', variables: {} },
      { filename: 'a.png', contentType: 'image/png', content: Buffer.from('png') },
    );

    const result = await post(
      multipartBody(upload),
      'multipart/form-data; boundary=gateway-test-boundary-7f3a9c1e5b',
      ALL_CREDENTIALS,
    );

    expect({ status: result.status, codes: codes(result) }).toEqual({ status: 403, codes: ['CSRF_HEADER_REQUIRED'] });
    await expectNextGoodRequestAnswered();
  });
});

describe('state after refused mutations', () => {
  it('a GET mutation and CSRF-less form posts did not delete pet 1', async () => {
    await get({ query: 'mutation { deletePet(id: 1) }' });
    await post(
      new URLSearchParams({ query: 'mutation { deletePet(id: 1) }' }).toString(),
      'application/x-www-form-urlencoded',
      ALL_CREDENTIALS,
    );

    await expectNextGoodRequestAnswered();
  });
});
