/**
 * Pet mutations through the gateway against the emulator: addPet and updatePet in each body
 * format the pet store accepts (the exact bytes sent, int64 ids kept exact), answers read from
 * XML, updatePetWithForm, priming of the pet loader, and which credential each call carries.
 */
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../src/emulator/server.js';
import type { BodyFormat } from '../src/upstream/codec.js';
import { ALL_CREDENTIALS, BEARER, expectedRequest, summary, useStack } from './helpers/stack.js';
import { ENFORCES_CREDENTIALS, UPSTREAM } from './helpers/upstream.js';

const MAX_INT64 = '9223372036854775807';
const PET_FIELDS = 'id name photoUrls category { id name } tags { id name } status';

const ADD_PET = `mutation ($input: PetInput!) { addPet(input: $input) { ${PET_FIELDS} } }`;
const UPDATE_PET = `mutation ($id: ID!, $input: PetInput!) { updatePet(id: $id, input: $input) { ${PET_FIELDS} } }`;

/** A pet with every field, the largest int64 id, and names that need escaping in XML and forms. */
const REX = {
  id: MAX_INT64,
  name: 'Rex',
  photoUrls: ['https://img.example/rex.png', 'b'],
  category: { id: '3', name: 'Dogs' },
  tags: [
    { id: '7', name: 'good boy' },
    { id: '8', name: 'x&y' },
  ],
  status: 'SOLD',
};

/** What the pet store receives for each format: the Content-Type and the exact bodies. */
/** `maxId`: how the body of `{ id: 9223372036854775807, name: "Max" }` starts, the id written exactly. */
const WIRE: Record<BodyFormat, { contentType: string; rex: string; kitty1: string; maxId: string }> = {
  json: {
    contentType: 'application/json',
    rex:
      '{"id":9223372036854775807,"category":{"id":3,"name":"Dogs"},"name":"Rex","photoUrls":["https://img.example/rex.png","b"],' +
      '"tags":[{"id":7,"name":"good boy"},{"id":8,"name":"x&y"}],"status":"sold"}',
    kitty1: '{"id":1,"name":"Kitty","photoUrls":[],"tags":[],"status":"pending"}',
    maxId: '{"id":9223372036854775807,',
  },
  xml: {
    contentType: 'application/xml',
    rex:
      '<?xml version="1.0" encoding="UTF-8"?><pet><id>9223372036854775807</id><category><id>3</id><name>Dogs</name></category><name>Rex</name>' +
      '<photoUrls><photoUrl>https://img.example/rex.png</photoUrl><photoUrl>b</photoUrl></photoUrls>' +
      '<tags><tag><id>7</id><name>good boy</name></tag><tag><id>8</id><name>x&amp;y</name></tag></tags><status>sold</status></pet>',
    kitty1:
      '<?xml version="1.0" encoding="UTF-8"?><pet><id>1</id><name>Kitty</name><photoUrls></photoUrls><tags></tags><status>pending</status></pet>',
    maxId: '<?xml version="1.0" encoding="UTF-8"?><pet><id>9223372036854775807</id>',
  },
  form: {
    contentType: 'application/x-www-form-urlencoded',
    rex:
      'id=9223372036854775807&name=Rex&photoUrls%5B0%5D=https%3A%2F%2Fimg.example%2Frex.png&photoUrls%5B1%5D=b' +
      '&category%5Bid%5D=3&category%5Bname%5D=Dogs&tags%5B0%5D%5Bid%5D=7&tags%5B0%5D%5Bname%5D=good%20boy' +
      '&tags%5B1%5D%5Bid%5D=8&tags%5B1%5D%5Bname%5D=x%26y&status=sold',
    kitty1: 'id=1&name=Kitty&status=pending',
    maxId: 'id=9223372036854775807&',
  },
};

/** The parts of an upstream request these tests assert on, the raw body included. */
function sent(request: RecordedRequest) {
  return { ...summary(request), body: request.body };
}

/** A pet store write with the bearer token only, as the interface document's security asks. */
function bearerOnly(method: string, path: string, contentType: string, body: string) {
  return { method, path, query: '', contentType, authorization: `Bearer ${BEARER}`, apiKey: undefined, body };
}

describe.each(['json', 'xml', 'form'] as const)('with %s bodies', (format) => {
  const wire = WIRE[format];
  const stack = useStack({ petstoreBodyFormat: format });

  describe('addPet', () => {
    it('sends the whole pet to POST /pet as the exact body, with the bearer token only, and returns it', async () => {
      const result = await stack.gql(ADD_PET, { input: REX }, ALL_CREDENTIALS);

      expect(result).toEqual({ status: 200, data: { addPet: REX } });
      expect(stack.upstream().map(sent)).toEqual([bearerOnly('POST', '/api/v3/pet', wire.contentType, wire.rex)]);
    });

    it('keeps the largest int64 id exact: the pet store stores it and serves it back under that id', async () => {
      await stack.gql(ADD_PET, { input: { id: MAX_INT64, name: 'Max' } }, ALL_CREDENTIALS);
      const [added] = stack.upstream();

      const result = await stack.gql(
        'query ($id: ID!) { pet(id: $id) { id name } }',
        { id: MAX_INT64 },
        ALL_CREDENTIALS,
      );

      expect(result.data).toEqual({ pet: { id: MAX_INT64, name: 'Max' } });
      expect(added?.body.startsWith(wire.maxId)).toBe(true);
      expect(stack.upstream().map((request) => [request.method, request.path])).toEqual([
        ['GET', `/api/v3/pet/${MAX_INT64}`],
      ]);
    });
  });

  describe('updatePet', () => {
    it('replaces the pet as a whole: PUT /pet with the id argument in the exact body, the bearer token only', async () => {
      const result = await stack.gql(
        UPDATE_PET,
        { id: '1', input: { name: 'Kitty', status: 'PENDING' } },
        ALL_CREDENTIALS,
      );

      expect(result).toEqual({
        status: 200,
        data: { updatePet: { id: '1', name: 'Kitty', photoUrls: [], category: null, tags: [], status: 'PENDING' } },
      });
      expect(stack.upstream().map(sent)).toEqual([bearerOnly('PUT', '/api/v3/pet', wire.contentType, wire.kitty1)]);
    });

    it('accepts an input.id that names the same pet ("01" for 1) and sends the canonical id', async () => {
      const result = await stack.gql(
        UPDATE_PET,
        { id: '1', input: { id: '01', name: 'Kitty', status: 'PENDING' } },
        ALL_CREDENTIALS,
      );

      expect(result.data).toEqual({ updatePet: expect.objectContaining({ id: '1', name: 'Kitty' }) });
      expect(stack.upstream().map(sent)).toEqual([bearerOnly('PUT', '/api/v3/pet', wire.contentType, wire.kitty1)]);
    });

    it('rejects an input.id that differs from id with BAD_USER_INPUT and no upstream call', async () => {
      const result = await stack.gql(UPDATE_PET, { id: '1', input: { id: '2', name: 'Kitty' } }, ALL_CREDENTIALS);

      expect(result.data).toBeNull();
      expect(result.errors).toEqual([
        expect.objectContaining({
          message: 'input.id (2) differs from id (1)',
          path: ['updatePet'],
          extensions: { code: 'BAD_USER_INPUT' },
        }),
      ]);
      expect(stack.upstream()).toEqual([]);
    });

    it('is NOT_FOUND, with the upstream status, for a pet that does not exist', async () => {
      const result = await stack.gql(UPDATE_PET, { id: '404404', input: { name: 'Ghost' } }, ALL_CREDENTIALS);

      expect(result.data).toBeNull();
      expect(result.errors).toEqual([
        expect.objectContaining({
          message: 'Pet not found',
          path: ['updatePet'],
          extensions: { code: 'NOT_FOUND', upstream: { service: 'petstore', operation: 'updatePet', status: 404 } },
        }),
      ]);
      expect(stack.upstream().map(summary)).toEqual([
        expectedRequest('PUT', '/api/v3/pet', 'bearer', wire.contentType),
      ]);
    });
  });
});

describe('form bodies', () => {
  const stack = useStack({ petstoreBodyFormat: 'form' });

  it('names nested fields with bracket keys: category[id], photoUrls[0], tags[0][name]', async () => {
    const result = await stack.gql(ADD_PET, { input: REX }, ALL_CREDENTIALS);

    expect(result.data).toEqual({ addPet: REX });
    const [request] = stack.upstream();
    expect(request?.contentType).toBe('application/x-www-form-urlencoded');
    expect([...new URLSearchParams(request?.body)]).toEqual([
      ['id', MAX_INT64],
      ['name', 'Rex'],
      ['photoUrls[0]', 'https://img.example/rex.png'],
      ['photoUrls[1]', 'b'],
      ['category[id]', '3'],
      ['category[name]', 'Dogs'],
      ['tags[0][id]', '7'],
      ['tags[0][name]', 'good boy'],
      ['tags[1][id]', '8'],
      ['tags[1][name]', 'x&y'],
      ['status', 'sold'],
    ]);
  });
});

describe('with XML answers (petstoreAccept: xml)', () => {
  const stack = useStack({ petstoreAccept: 'xml' });

  it('asks for application/xml and returns the same pet, one-item photo and tag lists still lists', async () => {
    const pet = {
      id: MAX_INT64,
      name: 'Solo',
      photoUrls: ['only.png'],
      category: { id: '1', name: 'Dogs' },
      tags: [{ id: '5', name: 'lonely' }],
      status: 'AVAILABLE',
    };

    const result = await stack.gql(ADD_PET, { input: pet }, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { addPet: pet } });
    expect(stack.upstream().map((request) => ({ ...summary(request), accept: request.headers['accept'] }))).toEqual([
      {
        method: 'POST',
        path: '/api/v3/pet',
        query: '',
        contentType: 'application/json',
        authorization: `Bearer ${BEARER}`,
        apiKey: undefined,
        accept: 'application/xml',
      },
    ]);
  });

  it('reads updatePetWithForm from an XML answer', async () => {
    const result = await stack.gql(
      'mutation { updatePetWithForm(id: 4, name: "Rover", status: PENDING) { id name photoUrls tags { name } status } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result.data).toEqual({
      updatePetWithForm: {
        id: '4',
        name: 'Rover',
        photoUrls: ['url1', 'url2'],
        tags: [{ name: 'tag1' }, { name: 'tag2' }],
        status: 'PENDING',
      },
    });
    expect(
      stack.upstream().map((request) => [request.method, request.path, request.query, request.headers['accept']]),
    ).toEqual([['POST', '/api/v3/pet/4', 'name=Rover&status=pending', 'application/xml']]);
  });
});

describe('updatePetWithForm', () => {
  const stack = useStack();

  it('sends POST /pet/{id}?name=…&status=sold with no body and the bearer token only, and returns the changed pet', async () => {
    const result = await stack.gql(
      'mutation { updatePetWithForm(id: 1, name: "New Name", status: SOLD) { id name status } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result).toEqual({ status: 200, data: { updatePetWithForm: { id: '1', name: 'New Name', status: 'SOLD' } } });
    expect(stack.upstream().map(sent)).toEqual([
      { ...expectedRequest('POST', '/api/v3/pet/1', 'bearer', undefined, 'name=New+Name&status=sold'), body: '' },
    ]);
  });

  it('sends no status parameter when only the name is given; the status stays, except on the reference server, which clears it', async () => {
    const result = await stack.gql(
      'mutation { updatePetWithForm(id: 2, name: "Felix") { id name status } }',
      {},
      ALL_CREDENTIALS,
    );

    // The reference server sets the status even when the parameter is absent, so pet 2 loses it.
    const status = UPSTREAM === 'reference' ? null : 'AVAILABLE';
    expect(result.data).toEqual({ updatePetWithForm: { id: '2', name: 'Felix', status } });
    expect(stack.upstream().map(sent)).toEqual([
      { ...expectedRequest('POST', '/api/v3/pet/2', 'bearer', undefined, 'name=Felix'), body: '' },
    ]);
  });
});

describe('pet mutations and the pet loader', () => {
  const stack = useStack();

  it('reuses a pet added earlier in the same mutation: a later order shows it without GET /pet/{id}', async () => {
    const result = await stack.gql(
      'mutation { addPet(input: { id: 77, name: "Neo" }) { id } placeOrder(input: { petId: 77, quantity: 1 }) { pet { name } } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result).toEqual({ status: 200, data: { addPet: { id: '77' }, placeOrder: { pet: { name: 'Neo' } } } });
    expect(stack.upstream().map(sent)).toEqual([
      bearerOnly('POST', '/api/v3/pet', 'application/json', '{"id":77,"name":"Neo","photoUrls":[],"tags":[]}'),
      {
        ...expectedRequest('POST', '/api/v3/store/order', 'none', 'application/json'),
        body: '{"petId":77,"quantity":1}',
      },
    ]);
  });
});

describe('pet mutations without credentials', () => {
  const stack = useStack();

  it('addPet sends the upstream no authorization header', async () => {
    await stack.gql(ADD_PET, { input: { id: '77', name: 'Neo' } });

    expect(stack.upstream().map(sent)).toEqual([
      {
        ...expectedRequest('POST', '/api/v3/pet', 'none', 'application/json'),
        body: '{"id":77,"name":"Neo","photoUrls":[],"tags":[]}',
      },
    ]);
  });

  // The reference server checks no credential: there the pet is added.
  it.runIf(ENFORCES_CREDENTIALS)(
    'addPet is UNAUTHENTICATED when the upstream refuses it without a bearer token',
    async () => {
      const result = await stack.gql(ADD_PET, { input: { id: '77', name: 'Neo' } });

      expect(result.data).toBeNull();
      expect(result.errors).toEqual([
        expect.objectContaining({
          path: ['addPet'],
          extensions: { code: 'UNAUTHENTICATED', upstream: { service: 'petstore', operation: 'addPet', status: 401 } },
        }),
      ]);
      expect(stack.upstream().map(sent)).toEqual([
        {
          ...expectedRequest('POST', '/api/v3/pet', 'none', 'application/json'),
          body: '{"id":77,"name":"Neo","photoUrls":[],"tags":[]}',
        },
      ]);
    },
  );
});
