import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../src/emulator/server.js';
import { startReferencePetstore } from './fixtures/reference-petstore/server.js';
import { seededPetJson, seededPetXml } from './helpers/upstream.js';

const JSON_ACCEPT = { accept: 'application/json' };
const XML_ACCEPT = { accept: 'application/xml' };
const JSON_BODY = { 'content-type': 'application/json', accept: 'application/json' };

let double: Emulator;

beforeAll(async () => {
  double = await startReferencePetstore();
});

afterAll(async () => {
  await double.close();
});

beforeEach(() => {
  double.reset();
  double.clearRequests();
});

function api(path: string, init?: RequestInit): Promise<Response> {
  return fetch(`${double.petstoreUrl}${path}`, init);
}

/** The `id` of every pet in a JSON array, read as text. */
function petIds(jsonText: string): string[] {
  return [...jsonText.matchAll(/\{"id":(-?\d+),"category"/g)].map((match) => match[1] ?? '');
}

/** A GET without any Accept header (fetch always adds one). */
function getWithoutAccept(path: string): Promise<{ status: number; contentType: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${double.petstoreUrl}${path}`, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          contentType: response.headers['content-type'],
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    request.on('error', reject);
    request.end();
  });
}

describe('reference pet store double: errors', () => {
  it('answers an unknown pet with bare text under a JSON content type', async () => {
    const response = await api('/pet/999', { headers: JSON_ACCEPT });

    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.text()).toBe('Pet not found');
  });

  it('labels the same bare text application/json without Accept and application/xml for */*', async () => {
    const withoutAccept = await getWithoutAccept('/pet/999');
    const anything = await api('/pet/999', { headers: { accept: '*/*' } });

    expect(withoutAccept).toEqual({ status: 404, contentType: 'application/json', body: 'Pet not found' });
    expect(anything.headers.get('content-type')).toBe('application/xml');
    expect(await anything.text()).toBe('Pet not found');
  });

  it('answers a comma-separated status with the framework enum error (backtick missing, as upstream)', async () => {
    const response = await api('/pet/findByStatus?status=available,sold', { headers: JSON_ACCEPT });

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: 400,
      message:
        'Input error: query parameter `status value `available,sold` is not in the allowable values `[available, pending, sold]`',
    });
  });

  it('answers a missing status with bare text, as the spec default is not applied', async () => {
    const response = await api('/pet/findByStatus', { headers: JSON_ACCEPT });

    expect(response.status).toBe(400);
    expect(await response.text()).toBe('No status provided. Try again?');
  });

  it('answers a non-integer id with the conversion error, as XML for Accept: application/xml', async () => {
    const json = await api('/pet/abc', { headers: JSON_ACCEPT });
    const xml = await api('/pet/abc', { headers: XML_ACCEPT });

    expect(json.status).toBe(400);
    expect(await json.json()).toEqual({
      code: 400,
      message: "Input error: couldn't convert `abc` to type `class java.lang.Long`",
    });
    expect(await xml.text()).toBe(
      "<ApiError><code>400</code><message>Input error: couldn't convert `abc` to type `class java.lang.Long`</message></ApiError>",
    );
  });

  it('answers POST /pet without id with the logged 500 and a 16-hex-digit id', async () => {
    const response = await api('/pet', { method: 'POST', headers: JSON_BODY, body: JSON.stringify({ name: 'no id' }) });

    expect(response.status).toBe(500);
    const body: unknown = await response.json();
    expect(body).toEqual({
      code: 500,
      message: expect.stringMatching(
        /^There was an error processing your request\. It has been logged \(ID: [0-9a-f]{16}\)$/,
      ),
    });
  });

  it('answers unknown paths, wrong methods and unparseable bodies with framework JSON', async () => {
    const unknown = await api('/nothing', { headers: JSON_ACCEPT });
    const wrongMethod = await api('/user/login', { method: 'PUT', headers: JSON_ACCEPT });
    const badBody = await api('/pet', { method: 'POST', headers: JSON_BODY, body: '{"id":' });

    expect([unknown.status, await unknown.json()]).toEqual([404, { code: 404, message: 'HTTP 404 Not Found' }]);
    expect([wrongMethod.status, await wrongMethod.json()]).toEqual([
      405,
      { code: 405, message: 'HTTP 405 Method Not Allowed' },
    ]);
    expect([badBody.status, await badBody.json()]).toEqual([
      400,
      { code: 400, message: 'Input error: unable to convert input to io.swagger.petstore.model.Pet' },
    ]);
  });
});

describe('reference pet store double: pets', () => {
  it('returns a pet once per (pet tag × query tag) match from findByTags, and nothing for a comma value', async () => {
    const repeated = await api('/pet/findByTags?tags=tag1&tags=tag2', { headers: JSON_ACCEPT });
    const comma = await api('/pet/findByTags?tags=tag1,tag2', { headers: JSON_ACCEPT });

    expect(petIds(await repeated.text())).toEqual(['1', '1', '2', '4', '4', '5', '7', '7', '8']);
    expect(await comma.text()).toBe('[]');
  });

  it('writes a pet as XML with the <Pet> root when application/xml is the first Accept value', async () => {
    const response = await api('/pet/1', { headers: XML_ACCEPT });

    expect(response.headers.get('content-type')).toBe('application/xml');
    expect(await response.text()).toBe(
      seededPetXml({ id: 1, category: [2, 'Cats'], name: 'Cat 1', tags: ['tag1', 'tag2'], status: 'available' }),
    );
  });

  it('writes a list as <ArrayList><item>, and JSON when xml is not the first Accept value', async () => {
    const xml = await api('/pet/findByStatus?status=sold', { headers: XML_ACCEPT });
    const mixed = await api('/pet/findByStatus?status=sold', {
      headers: { accept: 'application/xml, application/json' },
    });

    expect(await xml.text()).toMatch(/^<ArrayList><item><id>5<\/id>.*<\/item><\/ArrayList>$/);
    expect(mixed.headers.get('content-type')).toBe('application/json');
  });

  it('answers uploadImage with the updated Pet whose last photo URL is a server temp path', async () => {
    const response = await api('/pet/2/uploadImage?additionalMetadata=x', {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', accept: 'application/json' },
      body: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
    });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      id: 2,
      category: { id: 2, name: 'Cats' },
      name: 'Cat 2',
      photoUrls: ['url1', 'url2', expect.stringMatching(/^\/tmp\/inflector\d+\.tmp$/)],
      tags: [
        { id: 1, name: 'tag2' },
        { id: 2, name: 'tag3' },
      ],
      status: 'available',
    });
  });

  it('refuses a multipart upload with 415 and an empty one with bare text', async () => {
    const multipart = await api('/pet/2/uploadImage', {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=x', accept: 'application/json' },
      body: '--x--\r\n',
    });
    const emptyUpload = await api('/pet/2/uploadImage', {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', accept: 'application/json' },
    });

    expect([multipart.status, await multipart.json()]).toEqual([
      415,
      { code: 415, message: 'HTTP 415 Unsupported Media Type' },
    ]);
    expect([emptyUpload.status, await emptyUpload.text()]).toEqual([400, 'No file uploaded']);
  });

  it('keeps int64 ids exact and reads the bracket form convention', async () => {
    const big = await api('/pet', {
      method: 'POST',
      headers: JSON_BODY,
      body: '{"id":9223372036854775807,"name":"big","photoUrls":[]}',
    });
    const form = await api('/pet', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: 'id=12&name=Rex&category%5Bid%5D=1&category%5Bname%5D=Dogs&photoUrls%5B0%5D=u&tags%5B0%5D%5Bname%5D=t&status=sold',
    });

    expect(await big.text()).toBe('{"id":9223372036854775807,"name":"big","photoUrls":[],"tags":[]}');
    expect(await form.text()).toBe(
      '{"id":12,"category":{"id":1,"name":"Dogs"},"name":"Rex","photoUrls":["u"],"tags":[{"id":0,"name":"t"}],"status":"sold"}',
    );
  });

  it('clears the status when updatePetWithForm gets a name only, and moves the pet to the end', async () => {
    const updated = await api('/pet/1?name=Renamed', { method: 'POST', headers: JSON_ACCEPT });
    const available = await api('/pet/findByStatus?status=available', { headers: JSON_ACCEPT });
    const byTag = await api('/pet/findByTags?tags=tag1', { headers: JSON_ACCEPT });

    expect(await updated.json()).toEqual(
      seededPetJson({ id: 1, category: [2, 'Cats'], name: 'Renamed', tags: ['tag1', 'tag2'] }),
    );
    expect(petIds(await available.text())).not.toContain('1');
    expect(petIds(await byTag.text())).toEqual(['4', '7', '1']);
  });

  it('enforces no credential: DELETE /pet answers "Pet deleted" without api_key, even twice', async () => {
    const first = await api('/pet/3', { method: 'DELETE', headers: JSON_ACCEPT });
    const second = await api('/pet/3', { method: 'DELETE', headers: JSON_ACCEPT });
    const gone = await api('/pet/3', { headers: JSON_ACCEPT });

    expect([first.status, await first.text()]).toEqual([200, 'Pet deleted']);
    expect([second.status, await second.text()]).toEqual([200, 'Pet deleted']);
    expect(gone.status).toBe(404);
  });
});

describe('reference pet store double: store and users', () => {
  it('writes order dates as +00:00 ISO text in JSON and epoch milliseconds in XML', async () => {
    const json = await api('/store/order/1', { headers: JSON_ACCEPT });
    const xml = await api('/store/order/1', { headers: XML_ACCEPT });

    expect(await json.text()).toBe(
      '{"id":1,"petId":1,"quantity":100,"shipDate":"2025-01-01T00:00:00.000+00:00","status":"placed","complete":true}',
    );
    expect(await xml.text()).toBe(
      '<Order><id>1</id><petId>1</petId><quantity>100</quantity><shipDate>1735689600000</shipDate><status>placed</status><complete>true</complete></Order>',
    );
  });

  it('computes the inventory from orders, in Java HashMap order', async () => {
    const response = await api('/store/inventory', { headers: JSON_ACCEPT });

    expect(await response.text()).toBe('{"approved":50,"placed":100,"delivered":50}');
  });

  it('answers createWithList with the same array', async () => {
    const users = [
      { id: 21, username: 'alice', userStatus: 1 },
      { id: 22, username: 'bob', userStatus: 2 },
    ];
    const response = await api('/user/createWithList', {
      method: 'POST',
      headers: JSON_BODY,
      body: JSON.stringify(users),
    });
    const empty = await api('/user/createWithList', { method: 'POST', headers: JSON_BODY, body: '[]' });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(users);
    expect([empty.status, await empty.text()]).toEqual([400, 'No User provided. Try again?']);
  });

  it('renames a user with PUT /user/{username} and answers the new user', async () => {
    const renamed = { id: 1, username: 'renamed1', firstName: 'New', password: 'secret', userStatus: 2 };
    const response = await api('/user/user1', { method: 'PUT', headers: JSON_BODY, body: JSON.stringify(renamed) });
    const oldName = await api('/user/user1', { headers: JSON_ACCEPT });
    const newName = await api('/user/renamed1', { headers: JSON_ACCEPT });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(renamed);
    expect([oldName.status, await oldName.text()]).toEqual([404, 'User not found']);
    expect(await newName.json()).toEqual(renamed);
  });

  it('finds the seeded user "user?10" through a percent-encoded path', async () => {
    const response = await api('/user/user%3F10', { headers: JSON_ACCEPT });

    expect(await response.json()).toEqual({
      id: 11,
      username: 'user?10',
      firstName: 'first name ?10',
      lastName: 'last name ?10',
      email: 'email101@test.com',
      password: 'XXXXXXXXXXX',
      phone: '123-456-7890',
      userStatus: 1,
    });
  });
});

describe('reference pet store double: plants, recording and controls', () => {
  it('requires a bearer token on POST /plants and answers the Plant without id', async () => {
    const plant = JSON.stringify({ id: 7, name: 'Fern', tag: 'green' });
    const anonymous = await fetch(`${double.plantsUrl}/plants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: plant,
    });
    const created = await fetch(`${double.plantsUrl}/plants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
      body: plant,
    });
    const invalid = await fetch(`${double.plantsUrl}/plants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
      body: JSON.stringify({ id: 8, name: '' }),
    });

    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: 401 });
    expect([created.status, await created.json()]).toEqual([200, { name: 'Fern', tag: 'green' }]);
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({ error: 400, message: expect.any(String) });
  });

  it('records each request like the emulator', async () => {
    const body = '{"id":9,"petId":1,"quantity":2,"status":"placed"}';
    await api('/store/order?x=1', { method: 'POST', headers: { ...JSON_BODY, api_key: 'k' }, body });

    expect(double.requests).toHaveLength(1);
    const [recorded] = double.requests;
    expect(recorded).toMatchObject({
      method: 'POST',
      path: '/api/v3/store/order',
      query: 'x=1',
      contentType: 'application/json',
      body,
      bytesReceived: Buffer.byteLength(body),
      complete: true,
    });
    expect(recorded?.headers['api_key']).toBe('k');
    expect(recorded?.rawBody.toString('utf8')).toBe(recorded?.body);
    expect(double.maxInFlight).toBe(1);

    double.clearRequests();
    expect(double.requests).toHaveLength(0);
  });

  it('restores the seeded data on reset', async () => {
    await api('/pet/1', { method: 'DELETE' });
    double.reset();
    const response = await api('/pet/1', { headers: JSON_ACCEPT });

    expect(response.status).toBe(200);
  });
});
