import { request as httpRequest } from 'node:http';
import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import { startEmulator } from '../src/emulator/server.js';
import type { Emulator } from '../src/emulator/server.js';
import { seededPetJson, seededPetXml } from './helpers/upstream.js';

const BEARER = { authorization: 'Bearer test-token' };
const MAX_INT64 = '9223372036854775807';

let emulator: Emulator;

beforeAll(async () => {
  emulator = await startEmulator({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await emulator.close();
});

beforeEach(() => {
  emulator.reset();
  emulator.clearRequests();
});

/** The `id` values of a JSON array of pets, read as text so no digit is lost. */
function idsIn(jsonText: string): string[] {
  return [...jsonText.matchAll(/\{"id":(-?\d+),"category"/g)].map((match) => match[1] ?? '');
}

describe('pets', () => {
  it('returns a seeded pet as JSON with an api_key', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/pet/1`, { headers: { api_key: 'key' } });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual(
      seededPetJson({ id: 1, category: [2, 'Cats'], name: 'Cat 1', tags: ['tag1', 'tag2'], status: 'available' }),
    );
  });

  it('returns a seeded pet as XML when application/xml is the first Accept value', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/pet/4`, {
      headers: { ...BEARER, accept: 'application/xml' },
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/xml');
    expect(await response.text()).toBe(
      seededPetXml({ id: 4, category: [1, 'Dogs'], name: 'Dog 1', tags: ['tag1', 'tag2'], status: 'available' }),
    );
  });

  it('answers 401 naming the missing credential, without a credential', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/pet/findByStatus?status=available`);

    expect(response.status).toBe(401);
    const body: unknown = await response.json();
    expect(body).toMatchObject({ code: 401, message: expect.stringContaining('Bearer') });
  });

  it('answers 400 with the conversion message for a non-integer pet id', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/pet/abc`, { headers: BEARER });

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: 400,
      message: "Input error: couldn't convert `abc` to type `class java.lang.Long`",
    });
  });

  it.each([
    [
      'JSON',
      'application/json',
      `{"id":${MAX_INT64},"name":"Big","photoUrls":["u1"],"tags":[{"id":${MAX_INT64},"name":"t"}]}`,
    ],
    [
      'XML',
      'application/xml; charset=utf-8',
      `<pet><id>${MAX_INT64}</id><name>Big</name><photoUrls><photoUrl>u1</photoUrl></photoUrls>` +
        `<tags><tag><id>${MAX_INT64}</id><name>t</name></tag></tags></pet>`,
    ],
    [
      'form',
      'application/x-www-form-urlencoded',
      `id=${MAX_INT64}&name=Big&photoUrls%5B0%5D=u1&tags[0][id]=${MAX_INT64}&tags[0][name]=t`,
    ],
  ])('keeps an int64 id exact through POST /pet with a %s body', async (_format, contentType, body) => {
    const created = await fetch(`${emulator.petstoreUrl}/pet`, {
      method: 'POST',
      headers: { ...BEARER, 'content-type': contentType },
      body,
    });
    const fetched = await fetch(`${emulator.petstoreUrl}/pet/${MAX_INT64}`, { headers: BEARER });

    expect(created.status).toBe(200);
    const expected = `{"id":${MAX_INT64},"name":"Big","photoUrls":["u1"],"tags":[{"id":${MAX_INT64},"name":"t"}]}`;
    expect(await created.text()).toBe(expected);
    expect(await fetched.text()).toBe(expected);
  });

  it('assigns the next id to a pet sent without one', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/pet`, {
      method: 'POST',
      headers: { ...BEARER, 'content-type': 'application/json' },
      body: '{"name":"New"}',
    });

    expect(await response.json()).toEqual({ id: 11, name: 'New', photoUrls: [], tags: [] });
  });

  it('answers 400 for a pet without a name', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/pet`, {
      method: 'POST',
      headers: { ...BEARER, 'content-type': 'application/json' },
      body: '{"id":12}',
    });

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ code: 400, message: 'Input error: name is required' });
  });

  it('answers 415 for a media type the operation does not accept', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/pet`, {
      method: 'POST',
      headers: { ...BEARER, 'content-type': 'text/plain' },
      body: 'name=x',
    });

    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({ code: 415, message: 'HTTP 415 Unsupported Media Type' });
  });

  it.each([
    ['comma-separated', 'status=pending,sold'],
    ['repeated', 'status=pending&status=sold'],
  ])('finds pets by status given in %s form', async (_form, query) => {
    const response = await fetch(`${emulator.petstoreUrl}/pet/findByStatus?${query}`, { headers: BEARER });

    expect(response.status).toBe(200);
    expect(idsIn(await response.text())).toEqual(['3', '5', '6']);
  });

  it('rejects a status outside the enum with the upstream message', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/pet/findByStatus?status=lost`, { headers: BEARER });

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: 400,
      message:
        'Input error: query parameter `status value `lost` is not in the allowable values `[available, pending, sold]`',
    });
  });

  it('finds pets by tags, each pet once, in both list forms', async () => {
    const repeated = await fetch(`${emulator.petstoreUrl}/pet/findByTags?tags=tag1&tags=tag2`, { headers: BEARER });
    const commas = await fetch(`${emulator.petstoreUrl}/pet/findByTags?tags=tag1,tag2`, { headers: BEARER });

    const expected = ['1', '2', '4', '5', '7', '8'];
    expect(idsIn(await repeated.text())).toEqual(expected);
    expect(idsIn(await commas.text())).toEqual(expected);
  });

  it('answers 400 when no tags are given', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/pet/findByTags?tags=`, { headers: BEARER });

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ code: 400, message: 'No tags provided. Try again?' });
  });

  it('records a streamed upload as its bytes arrive and answers an ApiResponse', async () => {
    const url = new URL(`${emulator.petstoreUrl}/pet/3/uploadImage?additionalMetadata=front`);
    const upload = httpRequest(url, {
      method: 'POST',
      headers: { ...BEARER, 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
    });
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      upload.on('response', (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      upload.on('error', reject);
    });

    upload.write(Buffer.alloc(1000, 1));
    await expect.poll(() => emulator.requests[0]?.bytesReceived).toBe(1000);
    expect(emulator.requests[0]?.complete).toBe(false);
    upload.end(Buffer.alloc(24, 2));
    const { status, body } = await answer;

    expect(status).toBe(200);
    expect(JSON.parse(body)).toEqual({
      code: 200,
      type: 'unknown',
      message: 'additionalMetadata: front\nFile uploaded, 1024 bytes',
    });
    expect(emulator.requests[0]).toMatchObject({ bytesReceived: 1024, complete: true });
    const pet = await fetch(`${emulator.petstoreUrl}/pet/3`, { headers: BEARER });
    expect(await pet.json()).toMatchObject({ photoUrls: ['url1', 'url2', 'upload://3/1'] });
  });
});

describe('store', () => {
  it('sums order quantities by status for the inventory', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/store/inventory`, { headers: { api_key: 'key' } });

    expect(await response.json()).toEqual({ placed: 100, approved: 50, delivered: 50 });
  });

  it('stores an order with its ship date in UTC', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/store/order`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"petId":2,"quantity":3,"shipDate":"2025-03-20T12:00:00+01:00","status":"placed","complete":false}',
    });

    expect(await response.json()).toEqual({
      id: 4,
      petId: 2,
      quantity: 3,
      shipDate: '2025-03-20T11:00:00.000Z',
      status: 'placed',
      complete: false,
    });
  });
});

describe('users', () => {
  it('returns the last user of createWithList as a single User', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/user/createWithList`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[{"id":21,"username":"ann"},{"id":22,"username":"bob","password":"secret"}]',
    });
    const ann = await fetch(`${emulator.petstoreUrl}/user/ann`);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ id: 22, username: 'bob', password: 'secret' });
    expect(ann.status).toBe(200);
  });

  it('answers PUT /user/{username} with an empty body and stores the update', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/user/user2`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"id":2,"username":"user2","firstName":"Changed"}',
    });
    const updated = await fetch(`${emulator.petstoreUrl}/user/user2`);

    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(await updated.json()).toEqual({ id: 2, username: 'user2', firstName: 'Changed' });
  });

  it('answers 404 for an unknown user', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/user/nobody%20here`);

    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: 404, message: 'User not found' });
  });
});

describe('plants', () => {
  it('creates a plant and answers the Plant without its id', async () => {
    const response = await fetch(`${emulator.plantsUrl}/plants`, {
      method: 'POST',
      headers: { ...BEARER, 'content-type': 'application/json' },
      body: `{"id":${MAX_INT64},"name":"Fern","tag":"green"}`,
    });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ name: 'Fern', tag: 'green' });
  });

  it('answers 400 with the plant Error record when the id is missing', async () => {
    const response = await fetch(`${emulator.plantsUrl}/plants`, {
      method: 'POST',
      headers: { ...BEARER, 'content-type': 'application/json' },
      body: '{"name":"Fern"}',
    });

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 400, message: 'id is required' });
  });
});

describe('request validation against schema/*.openapi.yaml', () => {
  /** Posts a body to a pet store path (or the plant area for /plants) and reads the JSON answer. */
  async function post(path: string, contentType: string, body: string, headers: Record<string, string> = BEARER) {
    const base = path.startsWith('/plants') ? emulator.plantsUrl : emulator.petstoreUrl;
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': contentType },
      body,
    });
    return { status: response.status, body: (await response.json()) as unknown };
  }

  it.each([
    ['JSON', 'application/json', '{"id":"abc","name":"Rex"}'],
    ['XML', 'application/xml', '<pet><id>abc</id><name>Rex</name></pet>'],
    ['form', 'application/x-www-form-urlencoded', 'id=abc&name=Rex'],
  ])('rejects a pet whose id is not an integer in a %s body, naming the field', async (_format, contentType, body) => {
    const answer = await post('/pet', contentType, body);

    expect(answer).toEqual({
      status: 400,
      body: { code: 400, message: 'Request validation: body.id must be integer' },
    });
  });

  it.each([
    ['JSON', 'application/json', '{"name":"Rex","tags":[{"id":"x","name":"t"}]}'],
    ['XML', 'application/xml', '<pet><name>Rex</name><tags><tag><id>x</id><name>t</name></tag></tags></pet>'],
    ['form', 'application/x-www-form-urlencoded', 'name=Rex&tags%5B0%5D%5Bid%5D=x&tags%5B0%5D%5Bname%5D=t'],
  ])(
    'rejects a wrongly typed field inside a list of a %s body, naming its place',
    async (_format, contentType, body) => {
      const answer = await post('/pet', contentType, body);

      expect(answer).toEqual({
        status: 400,
        body: { code: 400, message: 'Request validation: body.tags[0].id must be integer' },
      });
    },
  );

  it('rejects a pet status outside the enum before anything is stored', async () => {
    const answer = await post('/pet', 'application/json', '{"id":1,"name":"Renamed","status":"lost"}');
    const pet = await fetch(`${emulator.petstoreUrl}/pet/1`, { headers: BEARER });

    expect(answer).toEqual({
      status: 400,
      body: {
        code: 400,
        message: 'Request validation: body.status must be equal to one of the allowed values: available, pending, sold',
      },
    });
    expect(await pet.json()).toMatchObject({ id: 1, name: 'Cat 1', status: 'available' });
  });

  it('rejects a findByStatus value outside the enum among comma-separated ones, in the reference server words', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/pet/findByStatus?status=available,lost`, { headers: BEARER });

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: 400,
      message:
        'Input error: query parameter `status value `lost` is not in the allowable values `[available, pending, sold]`',
    });
  });

  it('rejects an order whose ship date is not a date-time, and one whose quantity is not an integer', async () => {
    const badDate = await post(
      '/store/order',
      'application/json',
      '{"petId":1,"quantity":1,"shipDate":"tomorrow"}',
      {},
    );
    const badQuantity = await post('/store/order', 'application/x-www-form-urlencoded', 'petId=1&quantity=three', {});

    expect(badDate).toEqual({
      status: 400,
      body: { code: 400, message: 'Request validation: body.shipDate must match format "date-time"' },
    });
    expect(badQuantity).toEqual({
      status: 400,
      body: { code: 400, message: 'Request validation: body.quantity must be integer' },
    });
  });

  it('rejects an int32 field beyond its width', async () => {
    const answer = await post('/user', 'application/json', '{"username":"ann","userStatus":3000000000}', {});

    expect(answer).toEqual({
      status: 400,
      body: { code: 400, message: 'Request validation: body.userStatus must match format "int32"' },
    });
  });

  it('rejects a createWithList body that is not a list', async () => {
    const answer = await post('/user/createWithList', 'application/json', '{"username":"ann"}', {});

    expect(answer).toEqual({ status: 400, body: { code: 400, message: 'Request validation: body must be array' } });
  });

  it('rejects a non-integer path parameter of any operation, in the reference server words', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/store/order/1.5`);

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: 400,
      message: "Input error: couldn't convert `1.5` to type `class java.lang.Long`",
    });
  });

  it("answers the plant area's failures with its own Error record", async () => {
    const quotedId = await post('/plants', 'application/json', '{"id":"5","name":"Fern"}');
    const numericTag = await post('/plants', 'application/json', '{"id":5,"name":"Fern","tag":7}');

    expect(quotedId).toEqual({
      status: 400,
      body: { error: 400, message: 'Request validation: body.id must be integer' },
    });
    expect(numericTag).toEqual({
      status: 400,
      body: { error: 400, message: 'Request validation: body.tag must be string' },
    });
  });

  it('accepts either credential its document lists for DELETE /pet/{petId}, and answers 401 without one', async () => {
    const withApiKey = await fetch(`${emulator.petstoreUrl}/pet/1`, { method: 'DELETE', headers: { api_key: 'key' } });
    const withNone = await fetch(`${emulator.petstoreUrl}/pet/2`, { method: 'DELETE' });

    expect(withApiKey.status).toBe(200);
    expect(withNone.status).toBe(401);
    expect(withNone.headers.get('www-authenticate')).toBe('Bearer');
    expect(await withNone.json()).toEqual({
      code: 401,
      message: 'Missing credential: an api_key header or an Authorization: Bearer token is required',
    });
  });

  it('checks the credential before the parameters', async () => {
    const response = await fetch(`${emulator.petstoreUrl}/pet/findByStatus?status=lost`);

    expect(response.status).toBe(401);
  });

  it('accepts a valid XML pet with wrapped lists and stores it as sent', async () => {
    const answer = await post(
      '/pet',
      'application/xml',
      '<pet><id>50</id><name>Rex</name><photoUrls><photoUrl>a</photoUrl></photoUrls><tags><tag><id>3</id></tag></tags><status>sold</status></pet>',
    );

    expect(answer).toEqual({
      status: 200,
      body: { id: 50, name: 'Rex', photoUrls: ['a'], tags: [{ id: 3 }], status: 'sold' },
    });
  });
});

describe('server', () => {
  it('records method, path, query, headers and body of each request', async () => {
    await fetch(`${emulator.petstoreUrl}/pet/findByStatus?status=available&status=sold`, {
      headers: { ...BEARER, api_key: 'key-1' },
    });
    await fetch(`${emulator.petstoreUrl}/store/order`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: '{"id":9,"petId":1}',
    });

    expect(emulator.requests).toHaveLength(2);
    expect(emulator.requests[0]).toMatchObject({
      method: 'GET',
      path: '/api/v3/pet/findByStatus',
      query: 'status=available&status=sold',
      headers: { authorization: 'Bearer test-token', api_key: 'key-1' },
      body: '',
      complete: true,
    });
    expect(emulator.requests[1]).toMatchObject({
      method: 'POST',
      path: '/api/v3/store/order',
      query: '',
      contentType: 'application/json; charset=utf-8',
      body: '{"id":9,"petId":1}',
      bytesReceived: 18,
      complete: true,
    });
  });

  it('answers 404 for an unknown path and 405 for a wrong method', async () => {
    const unknown = await fetch(`${emulator.petstoreUrl}/nothing`);
    const wrongMethod = await fetch(`${emulator.petstoreUrl}/store/inventory`, { method: 'DELETE' });

    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ code: 404, message: 'HTTP 404 Not Found' });
    expect(wrongMethod.status).toBe(405);
  });

  it('restores the seed on reset()', async () => {
    await fetch(`${emulator.petstoreUrl}/pet/1`, { method: 'DELETE', headers: BEARER });

    emulator.reset();
    const response = await fetch(`${emulator.petstoreUrl}/pet/1`, { headers: BEARER });

    expect(response.status).toBe(200);
  });

  it('counts concurrent requests in maxInFlight', async () => {
    const slow = await startEmulator({ latencyMs: 50 });
    try {
      await Promise.all([1, 2, 3].map((id) => fetch(`${slow.petstoreUrl}/store/order/${id}`)));

      expect(slow.maxInFlight).toBe(3);
    } finally {
      await slow.close();
    }
  });
});
