/**
 * uploadPetImage through the gateway with the GraphQL multipart request specification: the
 * ApiResponse, what the upstream receives (a raw `application/octet-stream` body, the bearer
 * token only), streaming while the client is still sending, the size limit, and how malformed
 * or invalid requests are refused without reaching the upstream or stopping the gateway.
 */
import { Agent } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../src/emulator/server.js';
import {
  CLOSING,
  multipartBody,
  multipartOpening,
  openMultipart,
  postMultipart,
  uploadParts,
  type Part,
} from './helpers/multipart.js';
import { ALL_CREDENTIALS, expectedRequest, expectedUpload, summary, useStack, type Stack } from './helpers/stack.js';
import { ENFORCES_CREDENTIALS, UPSTREAM } from './helpers/upstream.js';
import { until } from './helpers/clock.js';

const UPLOAD = `mutation ($petId: ID!, $file: File!, $additionalMetadata: String) {
  uploadPetImage(petId: $petId, file: $file, additionalMetadata: $additionalMetadata) { code type message }
}`;

const KiB = 1024;
const MiB = 1024 * KiB;

/** A file of `size` bytes counting 0, 1, …, 255, 0, 1, …: every byte value, none of them text only. */
function fileOf(size: number): Buffer {
  return Buffer.from(Array.from({ length: size }, (_, index) => index % 256));
}

/** The parts of an upload of `content` (sent by the client as an image/png) for the given variables. */
function uploadOf(variables: Record<string, unknown>, content?: Buffer): Part[] {
  return uploadParts(
    { query: UPLOAD, variables },
    { filename: 'photo.png', contentType: 'image/png', ...(content ? { content } : {}) },
  );
}

/**
 * The ApiResponse for a successful upload of `size` bytes to a seeded pet (which has two photo
 * URLs). The emulator answers the interface document's ApiResponse; the reference server answers
 * the updated Pet, one photo URL longer, which the gateway reports as an ApiResponse of type Pet.
 */
function uploaded(petId: string, size: number, additionalMetadata = '') {
  return UPSTREAM === 'reference'
    ? { code: 200, type: 'Pet', message: `image added to pet ${petId}; it has 3 photo URLs` }
    : {
        code: 200,
        type: 'unknown',
        message: `additionalMetadata: ${additionalMetadata}\nFile uploaded, ${size} bytes`,
      };
}

/** The upstream's uploadImage requests among the recorded ones. */
function uploadRequests(requests: readonly RecordedRequest[]): RecordedRequest[] {
  return requests.filter((request) => request.path.endsWith('/uploadImage'));
}

/** What the upstream received for one upload; the body is compared byte for byte with the file. */
function received(request: RecordedRequest, file: Buffer) {
  return {
    ...summary(request),
    bytesReceived: request.bytesReceived,
    complete: request.complete,
    body: request.rawBody.equals(file) ? 'the file' : `${request.rawBody.length} other bytes`,
  };
}

/** The upload the emulator is receiving, once it has at least `bytes` of it: a snapshot of its progress. */
function upstreamUploadWith(stack: Stack, bytes: number) {
  return until(() => {
    const request = uploadRequests(stack.emulator.requests).find((candidate) => candidate.bytesReceived >= bytes);
    return request && { bytesReceived: request.bytesReceived, complete: request.complete };
  }, `the upstream to receive ${bytes} bytes`);
}

describe('uploadPetImage', () => {
  const stack = useStack();

  it("returns the pet store's ApiResponse for the uploaded file", async () => {
    const file = fileOf(256);

    const result = await postMultipart(
      stack.url,
      multipartBody(uploadOf({ petId: '1', additionalMetadata: 'front' }, file)),
      { headers: ALL_CREDENTIALS },
    );

    expect(result).toEqual({
      status: 200,
      data: { uploadPetImage: uploaded('1', 256, 'front') },
    });
    expect(stack.upstream().map((request) => received(request, file))).toEqual([
      {
        ...expectedUpload('1', 'front'),
        bytesReceived: 256,
        complete: true,
        body: 'the file',
      },
    ]);
  });

  it('sends no additionalMetadata parameter when none is given', async () => {
    const file = fileOf(10);

    const result = await postMultipart(stack.url, multipartBody(uploadOf({ petId: '2' }, file)), {
      headers: ALL_CREDENTIALS,
    });

    expect(result.data).toEqual({ uploadPetImage: uploaded('2', 10) });
    expect(stack.upstream().map((request) => [request.method, request.path, request.query])).toEqual([
      ['POST', '/api/v3/pet/2/uploadImage', ''],
    ]);
  });

  it('streams the file: the upstream has the first 256 KiB while the client is still sending the rest', async () => {
    const file = fileOf(1 * MiB);
    const upload = openMultipart(stack.url, { headers: ALL_CREDENTIALS });

    await upload.write(multipartOpening(uploadOf({ petId: '1' })));
    await upload.write(file.subarray(0, 256 * KiB));
    const midway = await upstreamUploadWith(stack, 256 * KiB);
    await upload.end(Buffer.concat([file.subarray(256 * KiB), CLOSING]));
    const result = await upload.response;

    expect(midway).toEqual({ bytesReceived: 256 * KiB, complete: false });
    expect(result).toEqual({
      status: 200,
      data: { uploadPetImage: uploaded('1', 1 * MiB) },
    });
    expect(stack.upstream().map((request) => received(request, file))).toEqual([
      {
        ...expectedUpload('1'),
        bytesReceived: 1 * MiB,
        complete: true,
        body: 'the file',
      },
    ]);
  });

  it('rejects petId "abc" with BAD_USER_INPUT before any upstream call', async () => {
    const result = await postMultipart(stack.url, multipartBody(uploadOf({ petId: 'abc' }, fileOf(1 * KiB))), {
      headers: ALL_CREDENTIALS,
    });

    expect(result.data).toBeNull();
    expect(result.errors).toEqual([
      expect.objectContaining({
        message: 'petId must be an integer from -9223372036854775808 to 9223372036854775807, got "abc"',
        path: ['uploadPetImage'],
        extensions: { code: 'BAD_USER_INPUT' },
      }),
    ]);
    expect(stack.upstream()).toEqual([]);
  });

  it('answers the next upload on the same connection after one rejected unread', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<Socket>();
    agent.on('free', (socket: Socket) => sockets.add(socket));
    try {
      // The rejected upload's 1 MiB is never read by a resolver; the gateway must drain it.
      const rejected = await postMultipart(stack.url, multipartBody(uploadOf({ petId: 'abc' }, fileOf(1 * MiB))), {
        headers: ALL_CREDENTIALS,
        agent,
      });
      const next = await postMultipart(stack.url, multipartBody(uploadOf({ petId: '2' }, fileOf(100))), {
        headers: ALL_CREDENTIALS,
        agent,
      });

      expect(rejected.errors?.map((error) => error.extensions?.['code'])).toEqual(['BAD_USER_INPUT']);
      expect(next.data).toEqual({ uploadPetImage: uploaded('2', 100) });
      expect(sockets.size).toBe(1);
      expect(stack.upstream().map((request) => [request.path, request.bytesReceived, request.complete])).toEqual([
        ['/api/v3/pet/2/uploadImage', 100, true],
      ]);
    } finally {
      agent.destroy();
    }
  });

  it('refuses a File sent as a plain JSON variable (not multipart) with BAD_USER_INPUT and no upstream call', async () => {
    const result = await stack.gql(
      UPLOAD,
      { petId: '1', file: { filename: 'photo.png', content: 'AAEC' } },
      ALL_CREDENTIALS,
    );

    expect(result.status).toBe(400);
    expect(result.data).toBeUndefined();
    expect(result.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(
          /^Variable "\$file" got invalid value .*; File must be sent as a file part of a multipart request/,
        ),
        extensions: { code: 'BAD_USER_INPUT' },
      }),
    ]);
    expect(stack.upstream()).toEqual([]);
  });

  it('sends the upstream no credential when the client gives none', async () => {
    await postMultipart(stack.url, multipartBody(uploadOf({ petId: '1' }, fileOf(256))));

    expect(stack.upstream().map(summary)).toEqual([
      expectedRequest('POST', '/api/v3/pet/1/uploadImage', 'none', 'application/octet-stream'),
    ]);
  });

  // The reference server checks no credential: there the upload goes through.
  it.runIf(ENFORCES_CREDENTIALS)(
    'is UNAUTHENTICATED when the upstream refuses an upload without credentials',
    async () => {
      const result = await postMultipart(stack.url, multipartBody(uploadOf({ petId: '1' }, fileOf(256))));

      expect(result.data).toBeNull();
      expect(result.errors).toEqual([
        expect.objectContaining({
          path: ['uploadPetImage'],
          extensions: {
            code: 'UNAUTHENTICATED',
            upstream: { service: 'petstore', operation: 'uploadFile', status: 401 },
          },
        }),
      ]);
      expect(stack.upstream().map(summary)).toEqual([
        expectedRequest('POST', '/api/v3/pet/1/uploadImage', 'none', 'application/octet-stream'),
      ]);
    },
  );

  describe('malformed multipart requests', () => {
    const [operations, map, file] = uploadOf({ petId: '1' }, fileOf(64));
    if (!operations || !map || !file) throw new Error('uploadOf returns three parts');
    const malformed: [string, Part[]][] = [
      ['without a "map" field', [operations, file]],
      ['whose "operations" is not JSON', [{ name: 'operations', value: '{"query": "mutation' }, map, file]],
    ];

    it.each(malformed)('answers a request %s with 400 BAD_REQUEST and no upstream call', async (_, parts) => {
      const result = await postMultipart(stack.url, multipartBody(parts), { headers: ALL_CREDENTIALS });

      expect(result).toEqual({
        status: 400,
        errors: [
          {
            message: 'Malformed multipart request: expected the JSON fields "operations" then "map"',
            extensions: { code: 'BAD_REQUEST' },
          },
        ],
      });
      expect(stack.upstream()).toEqual([]);
    });

    it('keeps answering uploads after malformed requests', async () => {
      for (const [, parts] of malformed)
        await postMultipart(stack.url, multipartBody(parts), { headers: ALL_CREDENTIALS });

      const result = await postMultipart(stack.url, multipartBody(uploadOf({ petId: '1' }, fileOf(64))), {
        headers: ALL_CREDENTIALS,
      });

      expect(result.data).toEqual({ uploadPetImage: uploaded('1', 64) });
      expect(stack.upstream().map((request) => [request.path, request.bytesReceived, request.complete])).toEqual([
        ['/api/v3/pet/1/uploadImage', 64, true],
      ]);
    });
  });
});

describe('more files than uploadMaxFiles in one request', () => {
  const stack = useStack({ uploadMaxFiles: 1 });

  it('refuses the request with 413 and PAYLOAD_TOO_LARGE before any file is sent upstream', async () => {
    const query =
      'mutation ($a: File!, $b: File!) { a: uploadPetImage(petId: 1, file: $a) { code } ' +
      'b: uploadPetImage(petId: 2, file: $b) { code } }';
    const parts: Part[] = [
      { name: 'operations', value: JSON.stringify({ query, variables: { a: null, b: null } }) },
      { name: 'map', value: JSON.stringify({ '0': ['variables.a'], '1': ['variables.b'] }) },
      { name: '0', filename: 'a.png', contentType: 'image/png', content: fileOf(64) },
      { name: '1', filename: 'b.png', contentType: 'image/png', content: fileOf(64) },
    ];

    const result = await postMultipart(stack.url, multipartBody(parts), { headers: ALL_CREDENTIALS });

    expect(result).toEqual({
      status: 413,
      errors: [
        expect.objectContaining({
          message: 'At most 1 files can be sent in one request',
          extensions: { code: 'PAYLOAD_TOO_LARGE' },
        }),
      ],
    });
    // Refused from the map, which names both files before either arrives: nothing was sent.
    expect(stack.upstream()).toEqual([]);
  });
});

describe('uploadPetImage over uploadMaxBytes', () => {
  const stack = useStack({ uploadMaxBytes: 1024 });

  const tooLarge = {
    status: 413,
    data: null,
    errors: [
      expect.objectContaining({
        message: 'File "0" is larger than 1024 bytes',
        path: ['uploadPetImage'],
        extensions: { code: 'PAYLOAD_TOO_LARGE' },
      }),
    ],
  };

  /** Pet 1's photo URLs, read back through the gateway: an upload that went through adds `upload://1/…`. */
  async function photoUrlsOfPet1(): Promise<unknown> {
    const result = await stack.gql('{ pet(id: 1) { photoUrls } }', {}, ALL_CREDENTIALS);
    return result.data?.['pet'];
  }

  it('fails a 64 KiB file with PAYLOAD_TOO_LARGE and stores no upload', async () => {
    const result = await postMultipart(stack.url, multipartBody(uploadOf({ petId: '1' }, fileOf(64 * KiB))), {
      headers: ALL_CREDENTIALS,
    });

    expect(result).toEqual(tooLarge);
    expect(uploadRequests(stack.upstream()).filter((request) => request.complete)).toEqual([]);
    expect(await photoUrlsOfPet1()).toEqual({ photoUrls: ['url1', 'url2'] });
  });

  it('aborts the upstream request already under way when the file grows past the limit', async () => {
    const file = fileOf(64 * KiB);
    const upload = openMultipart(stack.url, { headers: ALL_CREDENTIALS });

    await upload.write(multipartOpening(uploadOf({ petId: '1' })));
    await upload.write(file.subarray(0, 512));
    const begun = await upstreamUploadWith(stack, 512);
    await upload.end(Buffer.concat([file.subarray(512), CLOSING]));
    const result = await upload.response;

    expect(begun).toEqual({ bytesReceived: 512, complete: false });
    expect(result).toEqual(tooLarge);
    const [aborted, ...others] = uploadRequests(stack.upstream());
    expect(others).toEqual([]);
    // Aborted, not completed: the upstream never has the whole body (so it stores nothing).
    expect(
      aborted && {
        ...summary(aborted),
        complete: aborted.complete,
        gotWholeFile: aborted.bytesReceived >= file.length,
      },
    ).toEqual({
      ...expectedUpload('1'),
      complete: false,
      gotWholeFile: false,
    });
    expect(await photoUrlsOfPet1()).toEqual({ photoUrls: ['url1', 'url2'] });
  });

  it('accepts a file of exactly uploadMaxBytes', async () => {
    const file = fileOf(1024);

    const result = await postMultipart(stack.url, multipartBody(uploadOf({ petId: '1' }, file)), {
      headers: ALL_CREDENTIALS,
    });

    expect(result).toEqual({
      status: 200,
      data: { uploadPetImage: uploaded('1', 1024) },
    });
    expect(uploadRequests(stack.upstream()).map((request) => received(request, file))).toEqual([
      expect.objectContaining({
        path: '/api/v3/pet/1/uploadImage',
        bytesReceived: 1024,
        complete: true,
        body: 'the file',
      }),
    ]);
  });

  it('answers the next upload after one over the limit', async () => {
    await postMultipart(stack.url, multipartBody(uploadOf({ petId: '1' }, fileOf(64 * KiB))), {
      headers: ALL_CREDENTIALS,
    });
    stack.upstream();

    const result = await postMultipart(stack.url, multipartBody(uploadOf({ petId: '1' }, fileOf(1000))), {
      headers: ALL_CREDENTIALS,
    });

    expect(result.data).toEqual({ uploadPetImage: uploaded('1', 1000) });
    expect(stack.upstream().map((request) => [request.path, request.bytesReceived, request.complete])).toEqual([
      ['/api/v3/pet/1/uploadImage', 1000, true],
    ]);
  });
});
