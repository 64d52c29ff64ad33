/**
 * Upstreams that answer differently from the emulator, within what the interface allows or the
 * reference server does: the gateway's result is the same. Also list priming, echoed
 * credentials, and uploads to an upstream that is down or silent.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { multipartBody, postMultipart, uploadParts } from './helpers/multipart.js';
import { closedPortUrl, json, startScriptedUpstream, type ScriptedUpstream } from './helpers/scripted-upstream.js';
import { ALL_CREDENTIALS, API_KEY, BEARER, timeoutsSetBy, type ObservedGateway } from './helpers/stack.js';
import { serveScripted } from './helpers/observed.js';

const CAT = { id: 1, name: 'Cat 1', photoUrls: ['url1'], tags: [{ id: 1, name: 'tag1' }], status: 'available' };

let upstream: ScriptedUpstream;
let gateway: ObservedGateway;
beforeAll(async () => {
  upstream = await startScriptedUpstream();
  gateway = await serveScripted(upstream.url);
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});
beforeEach(() => upstream.reset());

const calls = () => upstream.requests.map((request) => `${request.method} ${request.url}`);

describe('answers the emulator does not give', () => {
  it('updatePetWithForm reads the pet back when the upstream answers without a body', async () => {
    upstream.answer((request) =>
      request.method === 'POST' ? { status: 200 } : json(200, { ...CAT, name: 'Tom', status: 'sold' }),
    );

    const result = await gateway.gql(
      'mutation { updatePetWithForm(id: 1, name: "Tom", status: SOLD) { id name status } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result.data).toEqual({ updatePetWithForm: { id: '1', name: 'Tom', status: 'SOLD' } });
    expect(calls()).toEqual(['POST /api/v3/pet/1?name=Tom&status=sold', 'GET /api/v3/pet/1']);
  });

  it('createUsers returns the list the upstream answers with (the reference server), without passwords', async () => {
    upstream.answer(
      json(200, [
        { id: 21, username: 'ann', password: 'pw-ann' },
        { id: 22, username: 'bob', password: 'pw-bob' },
      ]),
    );

    const result = await gateway.gql(
      'mutation { createUsers(input: [{ username: "ann", password: "pw-ann" }, { username: "bob", password: "pw-bob" }]) { id username } }',
    );

    expect(result.data).toEqual({
      createUsers: [
        { id: '21', username: 'ann' },
        { id: '22', username: 'bob' },
      ],
    });
    expect(calls()).toEqual(['POST /api/v3/user/createWithList']);
    expect(upstream.requests[0]?.body).toBe(
      '[{"username":"ann","password":"pw-ann"},{"username":"bob","password":"pw-bob"}]',
    );
    expect(JSON.stringify(result)).not.toContain('pw-');
  });

  it('updateUser returns the user the upstream answers with (the reference server), with no read-back', async () => {
    upstream.answer(json(200, { id: 5, username: 'renamed', email: 'r@example.com', password: 'secret-pw' }));

    const result = await gateway.gql(
      'mutation { updateUser(username: "user5", input: { username: "renamed", password: "secret-pw" }) { id username email } }',
    );

    expect(result.data).toEqual({ updateUser: { id: '5', username: 'renamed', email: 'r@example.com' } });
    expect(calls()).toEqual(['PUT /api/v3/user/user5']);
    expect(JSON.stringify(result)).not.toContain('secret-pw');
  });

  it('reports the updated Pet the reference server answers an upload with as an ApiResponse', async () => {
    upstream.answer(json(200, { ...CAT, photoUrls: ['url1', '/tmp/inflector123.tmp'] }));
    const upload = 'mutation ($file: File!) { uploadPetImage(petId: 1, file: $file) { code type message } }';

    const result = await postMultipart(
      gateway.url,
      multipartBody(
        uploadParts(
          { query: upload, variables: {} },
          { filename: 'a.png', contentType: 'image/png', content: Buffer.from('png') },
        ),
      ),
      {
        headers: ALL_CREDENTIALS,
      },
    );

    expect(result.data).toEqual({
      uploadPetImage: { code: 200, type: 'Pet', message: 'image added to pet 1; it has 2 photo URLs' },
    });
    expect(calls()).toEqual(['POST /api/v3/pet/1/uploadImage']);
    expect(upstream.requests[0]?.body).toBe('png');
  });

  it('reads XML with empty elements: an empty <tag/> is a tag without fields, not a failure', async () => {
    upstream.answer({
      status: 200,
      headers: { 'content-type': 'application/xml' },
      body: '<ArrayList><item><id>50</id><name>Odd</name><photoUrls/><tags><tag/></tags><status>available</status></item></ArrayList>',
    });

    const result = await gateway.gql(
      '{ petsByStatus(status: [AVAILABLE]) { id photoUrls tags { id name } } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result).toEqual({
      status: 200,
      data: { petsByStatus: [{ id: '50', photoUrls: [], tags: [{ id: null, name: null }] }] },
    });
  });

  it('keeps only pets that carry a requested tag exactly, whatever the upstream matched', async () => {
    // A server that splits on commas answers tags=tag1,tag2 with pets of either tag.
    upstream.answer(json(200, [CAT, { ...CAT, id: 2, tags: [{ id: 1, name: 'tag1,tag2' }] }]));

    const result = await gateway.gql('{ petsByTags(tags: ["tag1,tag2"]) { id } }', {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ petsByTags: [{ id: '2' }] });
    expect(calls()).toEqual(['GET /api/v3/pet/findByTags?tags=tag1%2Ctag2']);
  });
});

describe('list results prime the pet loader', () => {
  it('a pet a list returned is not fetched again later in the same request', async () => {
    upstream.answer((request) =>
      request.url.startsWith('/api/v3/pet/findByStatus')
        ? json(200, [CAT])
        : // The order answers well after the list, so Order.pet is looked up after the list primed the loader.
          { ...json(200, { id: 9, petId: 1, quantity: 1 }), delayMs: 150 },
    );

    const result = await gateway.gql(
      '{ petsByStatus(status: [AVAILABLE]) { id } order(id: 9) { pet { name } } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result.data).toEqual({ petsByStatus: [{ id: '1' }], order: { pet: { name: 'Cat 1' } } });
    expect(calls().sort()).toEqual(['GET /api/v3/pet/findByStatus?status=available', 'GET /api/v3/store/order/9']);
  });
});

describe('credentials the upstream echoes', () => {
  it('are redacted from the message passed on', async () => {
    upstream.answer(json(401, { code: 401, message: `api_key ${API_KEY} is not valid; token ${BEARER} expired` }));

    const result = await gateway.gql('{ pet(id: 1) { id } }', {}, { api_key: API_KEY });

    expect(result.errors?.[0]?.message).toBe('api_key [redacted] is not valid; token test-bearer-token-0123 expired');
    expect(result.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
  });
});

describe('uploads to an upstream that fails', () => {
  const UPLOAD = 'mutation ($petId: ID!, $file: File!) { uploadPetImage(petId: $petId, file: $file) { code } }';
  const body = multipartBody(
    uploadParts(
      { query: UPLOAD, variables: { petId: '1' } },
      { filename: 'a.png', contentType: 'image/png', content: Buffer.alloc(2048, 7) },
    ),
  );

  it('is UPSTREAM_UNAVAILABLE when the connection is refused', async () => {
    const down = await serveScripted(await closedPortUrl(), upstream.url);
    try {
      const result = await postMultipart(down.url, body, { headers: ALL_CREDENTIALS });

      expect(result.data).toBeNull();
      expect(result.errors?.map((error) => [error.extensions?.['code'], error.extensions?.['upstream']])).toEqual([
        ['UPSTREAM_UNAVAILABLE', { service: 'petstore', operation: 'uploadFile' }],
      ]);
    } finally {
      await down.close();
    }
  });

  it('is UPSTREAM_TIMEOUT when the upstream does not answer in time', async () => {
    upstream.answer({ hang: true });
    const impatient = await serveScripted(upstream.url, upstream.url, {
      upstreamTimeouts: timeoutsSetBy({ UPSTREAM_TIMEOUT_MS: '200' }),
    });
    try {
      const result = await postMultipart(impatient.url, body, { headers: ALL_CREDENTIALS });

      expect(result.errors?.map((error) => [error.extensions?.['code'], error.extensions?.['upstream']])).toEqual([
        ['UPSTREAM_TIMEOUT', { service: 'petstore', operation: 'uploadFile' }],
      ]);
      expect(calls()).toEqual(['POST /api/v3/pet/1/uploadImage']);
    } finally {
      await impatient.close();
    }
  });
});
