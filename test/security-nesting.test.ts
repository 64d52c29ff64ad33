/**
 * Hostile nesting (INPUT_MAX_DEPTH): variables, extensions and documents nested deeper than the
 * limit are refused with 400 `INPUT_TOO_DEEP` before anything recursive reads them, on every
 * HTTP path (a JSON POST, a GET, a persisted document). A property sends nesting of every kind
 * from 1 to 100,000 levels: never a 5xx, never a dropped connection, at most one log line per
 * request and no stack, and the next ordinary query still answers.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { documentNestsDeeper, fragmentsChainDeeper, valueNestsDeeper } from '../src/security/input-depth.js';
import { useObserved } from './helpers/observed.js';
import { ALL_CREDENTIALS } from './helpers/stack.js';

const LIMIT = 100;

/** `depth` levels of `open` … `close` around `inner`, as text. */
const nested = (depth: number, inner: string, open = '[', close = ']') =>
  `${open.repeat(depth)}${inner}${close.repeat(depth)}`;

describe('the nesting checks', () => {
  it('measure arrays and objects in values, without recursion', () => {
    expect(valueNestsDeeper('text', 0)).toBe(false);
    expect(valueNestsDeeper({ a: [1, { b: 2 }] }, 3)).toBe(false);
    expect(valueNestsDeeper({ a: [1, { b: 2 }] }, 2)).toBe(true);
    expect(valueNestsDeeper(JSON.parse(nested(200_000, '1')), LIMIT)).toBe(true);
    expect(valueNestsDeeper(JSON.parse(nested(LIMIT, '1')), LIMIT)).toBe(false);
  });

  it('count brackets of a document outside strings, block strings and comments', () => {
    expect(documentNestsDeeper('{ a(x: [[1]]) { b } }', 4)).toBe(false);
    expect(documentNestsDeeper('{ a(x: [[1]]) { b } }', 3)).toBe(true);
    expect(documentNestsDeeper('{ a(x: "[[[[\\"[[[[") }', 2)).toBe(false);
    expect(documentNestsDeeper('{ a(x: """[[[[ \\""" [[[[""") }', 2)).toBe(false);
    expect(documentNestsDeeper('{ a # [[[[[[\n }', 1)).toBe(false);
    expect(documentNestsDeeper(nested(200_000, '1'), LIMIT)).toBe(true);
  });

  it('measure chains of fragments spreading one another, cycles included', () => {
    const chain = (length: number) =>
      parse(
        Array.from({ length }, (_, index) => `fragment F${index} on Query { ...F${index + 1} }`).join('\n') +
          `\nfragment F${length} on Query { __typename }`,
      );
    expect(fragmentsChainDeeper(chain(LIMIT - 1), LIMIT)).toBe(false);
    expect(fragmentsChainDeeper(chain(LIMIT), LIMIT)).toBe(true);
    expect(fragmentsChainDeeper(chain(50_000), LIMIT)).toBe(true);
    expect(fragmentsChainDeeper(parse('fragment A on Query { ...B } fragment B on Query { ...A }'), 1)).toBe(true);
  });
});

/** How a request reaches the gateway. */
type Transport = 'json' | 'graphql-response' | 'get';

/** A hostile request: its GraphQL parameters as JSON text (built as text: JSON.stringify recurses too). */
type Hostile = { kind: string; query: string; variables?: string; extensions?: string };

const QUERY_STRING = (text: string) => JSON.stringify(text);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Nesting of every kind the gateway reads, `depth` levels deep. */
function hostile(kind: string, depth: number): Hostile {
  switch (kind) {
    case 'variables: arrays':
      return {
        kind,
        query: 'query($v: String!) { __type(name: $v) { name } }',
        variables: `{"v":${nested(depth, '1')}}`,
      };
    case 'variables: objects':
      return {
        kind,
        query: 'query($v: String!) { __type(name: $v) { name } }',
        variables: `{"v":${nested(depth, '1', '{"a":', '}')}}`,
      };
    case 'variables: an argument':
      return {
        kind,
        query: 'query($s: [PetStatus!]) { petsByStatus(status: $s) { id } }',
        variables: `{"s":${nested(depth, '"available"')}}`,
      };
    case 'extensions':
      return { kind, query: '{ __typename }', extensions: `{"x":${nested(depth, '{}', '[{"a":', '}]')}}` };
    case 'document: list literal':
      return { kind, query: `{ petsByTags(tags: ${nested(depth, '"a"')}) { id } }` };
    case 'document: input object literal':
      return { kind, query: `mutation { addPet(input: ${nested(depth, 'name: "x"', '{ category: ', ' }')}) { id } }` };
    case 'document: selections':
      return { kind, query: nested(depth, '__typename', '{ a ', ' }') };
    case 'document: inline fragments':
      return { kind, query: nested(depth, '__typename', '{ ... on Query ', ' }') };
    case 'document: fragment chain':
      return {
        kind,
        query:
          '{ ...F0 }' +
          Array.from({ length: depth }, (_, index) => `fragment F${index} on Query{...F${index + 1}}`).join('') +
          `fragment F${depth} on Query{__typename}`,
      };
    default: // 'persisted document': the document sent with its hash, as APQ registers it
      return {
        kind,
        query: `{ petsByTags(tags: ${nested(depth, '"a"')}) { id } }`,
        extensions: `{"persistedQuery":{"version":1,"sha256Hash":"${sha256(`{ petsByTags(tags: ${nested(depth, '"a"')}) { id } }`)}"}}`,
      };
  }
}

const KINDS = [
  'variables: arrays',
  'variables: objects',
  'variables: an argument',
  'extensions',
  'document: list literal',
  'document: input object literal',
  'document: selections',
  'document: inline fragments',
  'document: fragment chain',
  'persisted document',
];

/** Sends a hostile request; the status, the body and the request id (or the transport's failure). */
async function send(url: string, request: Hostile, transport: Transport) {
  const headers: Record<string, string> = {
    accept: transport === 'graphql-response' ? 'application/graphql-response+json' : 'application/json',
    'graphql-preflight': '1',
    // A shallow request runs: with the credentials, the upstream answers it without a failure to log.
    ...ALL_CREDENTIALS,
  };
  let response: Response;
  if (transport === 'get') {
    const search = new URLSearchParams({ query: request.query });
    if (request.variables) search.set('variables', request.variables);
    if (request.extensions) search.set('extensions', request.extensions);
    response = await fetch(`${url}?${search}`, { headers });
  } else {
    const body =
      `{"query":${QUERY_STRING(request.query)}` +
      (request.variables ? `,"variables":${request.variables}` : '') +
      (request.extensions ? `,"extensions":${request.extensions}` : '') +
      '}';
    response = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
  }
  return { status: response.status, id: response.headers.get('x-request-id'), text: await response.text() };
}

describe('hostile nesting, sent to a running gateway', () => {
  const observed = useObserved();

  // With CORS_ORIGINS set every request goes through yoga; without, plain ones through the HTTP lane first.
  it.each([
    ['json', {}],
    ['graphql-response', {}],
    ['get', {}],
    ['json', { corsOrigins: ['https://app.example.com'] }],
    ['get', { corsOrigins: ['https://app.example.com'] }],
  ] as const)(
    'is refused with 400 INPUT_TOO_DEEP before anything reads it (%s, %j), and the upstream receives nothing',
    async (transport, overrides) => {
      const gateway = await observed.serve(undefined, overrides);
      for (const kind of KINDS.filter((each) => each !== 'document: fragment chain')) {
        // GET cannot carry a mutation; the persisted document is refused the same way by hash alone below.
        if (transport === 'get' && kind === 'document: input object literal') continue;
        const answer = await send(gateway.url, hostile(kind, 3 * LIMIT), transport);
        expect({ kind, status: answer.status }).toEqual({ kind, status: 400 });
        expect(JSON.parse(answer.text)).toEqual({
          errors: [
            {
              message: expect.stringMatching(/nest deeper than 100 levels \(INPUT_MAX_DEPTH\)/),
              extensions: { code: 'INPUT_TOO_DEEP' },
            },
          ],
        });
      }
      expect(observed.emulator.requests).toEqual([]);
    },
  );

  it('refuses a persisted document by its hash alone, once it is too deep', async () => {
    const gateway = await observed.serve();
    const registered = hostile('persisted document', 1_000);
    expect((await send(gateway.url, registered, 'json')).status).toBe(400);
    const byHash = await send(
      gateway.url,
      { kind: 'by hash', query: '', extensions: registered.extensions ?? '' },
      'get',
    );
    expect(byHash.status).toBeLessThan(500);
    expect(byHash.text).toMatch(/INPUT_TOO_DEEP|PERSISTED_QUERY_NOT_FOUND/);
  });

  it('refuses a chain of fragments longer than the limit, where the token limit lets it through', async () => {
    const gateway = await observed.serve(undefined, { queryMaxTokens: 1_000_000 });
    const answer = await send(gateway.url, hostile('document: fragment chain', 20_000), 'graphql-response');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ errors: [{ extensions: { code: 'INPUT_TOO_DEEP' } }] });
  });

  it('serves nesting up to the limit as it did', async () => {
    const gateway = await observed.serve();
    const atLimit = await send(gateway.url, hostile('extensions', LIMIT / 2 - 1), 'json');
    expect(JSON.parse(atLimit.text)).toEqual({ data: { __typename: 'Query' } });
    const variables = await send(gateway.url, hostile('variables: arrays', LIMIT - 2), 'json');
    // A String variable given a list: refused by graphql-js's coercion, not by the nesting limit.
    expect(variables.status).toBe(400);
    expect(variables.text).toMatch(/BAD_USER_INPUT/);
    expect(variables.text).toMatch(/String cannot represent a non string value/);
    expect(variables.text).not.toMatch(/INPUT_TOO_DEEP/);
  });

  it('at its highest setting (500), nesting up to the limit of every kind is answered without a 5xx', async () => {
    const gateway = await observed.serve(undefined, {
      inputMaxDepth: 500,
      queryMaxTokens: 1_000_000,
      queryMaxDepth: 1000,
    });
    for (const kind of KINDS) {
      // Each level of the extensions is two (an array and an object); the document's operation adds two brackets.
      const answer = await send(gateway.url, hostile(kind, kind === 'extensions' ? 245 : 495), 'json');
      expect({ kind, status: answer.status < 500, tooDeep: answer.text.includes('INPUT_TOO_DEEP') }).toEqual({
        kind,
        status: true,
        tooDeep: false,
      });
    }
    expect(gateway.log.text()).not.toMatch(/RangeError|INTERNAL_SERVER_ERROR/);
  });

  it('never answers 5xx, never drops the connection, logs at most one line without a stack, and keeps serving', async () => {
    const gateway = await observed.serve();
    const depth = fc.oneof(
      fc.integer({ min: 1, max: 2 * LIMIT }),
      fc.integer({ min: 1, max: 100_000 }),
      fc.constantFrom(1, LIMIT, LIMIT + 1, 1_500, 3_000, 100_000),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...KINDS),
        depth,
        fc.constantFrom<Transport>('json', 'graphql-response', 'get'),
        async (kind, levels, transport) => {
          const answer = await send(gateway.url, hostile(kind, levels), transport);
          expect(answer.status).toBeLessThan(500);
          const ordinary = await gateway.gql('{ __typename }');
          expect(ordinary).toEqual({ status: 200, data: { __typename: 'Query' } });
          // A request too large for the server to read (a GET's URL) has no id and no line of its own.
          const lines = gateway.log.lines().filter((line) => answer.id !== null && line['requestId'] === answer.id);
          expect(lines.length).toBeLessThanOrEqual(1);
          expect(gateway.log.text()).not.toMatch(/stack|RangeError|at \w+ \(/);
        },
      ),
      { numRuns: 80 },
    );
  }, 120_000);
});
