/**
 * `npm run check:upstream` against real upstreams: a live server serving its document over HTTP
 * (a loopback server started here), and the documents the public reference servers publish, as
 * this project knows them (`test/fixtures/reference-documents.ts`: the gateway's documents with
 * each known difference of the published ones made as one edit; the published documents are
 * third-party and not copied here). Each is written to a temporary file, as a user would save it.
 */
import type { IncomingMessage, Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Change } from '../src/contract/changes.js';
import { referencePetstoreDocument, referencePlantsDocument } from './fixtures/reference-documents.js';
import { at, gatewayDocument, runCheck, useEditedDocuments, type Document } from './helpers/openapi-edits.js';
import { listen, stop } from './helpers/stack.js';

const documents = useEditedDocuments();

// The real differences between the reference server's document and the gateway's that matter:
// - it lists an order's status as an enum (placed, approved, delivered) where the gateway's
//   document leaves it open: an OrderInput.status outside those three would be refused;
// - placeOrder answers JSON only (the gateway asks for JSON unless PETSTORE_ACCEPT=xml);
// - updateUser declares no answer body (the gateway reads the user when one is sent, and takes
//   no body otherwise).
const REFERENCE_PETSTORE_DANGEROUS = [
  'dangerous: POST /store/order: request body field `status` is now limited to `placed`, `approved`, `delivered` → `OrderInput.status` (String) may carry other values, which the upstream would refuse',
  'dangerous: POST /store/order: answer no longer comes as application/xml → calls fail when PETSTORE_ACCEPT asks for it',
  'dangerous: PUT /user/{username}: successful answer no longer declares a body → the gateway reads one into `User`',
];

/** The class and message of each change that is not safe. */
const notSafe = (changes: readonly Change[]) =>
  changes.filter((change) => change.class !== 'safe').map((change) => `${change.class}: ${change.message}`);

describe('a live upstream serving its document', () => {
  let server: Server;
  let origin: string;
  const received: { method: string | undefined; url: string | undefined }[] = [];
  let served: Document = gatewayDocument();

  beforeAll(async () => {
    ({ server, url: origin } = await listen((request: IncomingMessage, response) => {
      received.push({ method: request.method, url: request.url });
      if (request.url !== '/api/v3/openapi.json') {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(served));
    }));
  });
  afterAll(() => stop(server));

  test('is fetched from the URL given, once, and compared like a file', async () => {
    served = gatewayDocument();
    (at(served, 'components', 'schemas', 'PetStatus')['enum'] as string[]).push('adopted');
    received.length = 0;
    const run = await runCheck([`${origin}/api/v3/openapi.json`, '--json']);
    expect(received).toEqual([{ method: 'GET', url: '/api/v3/openapi.json' }]);
    expect(run.code).toBe(1);
    const changes = JSON.parse(run.stdout) as Change[];
    expect(changes.find((change) => change.operation === 'GET /pet/{petId}')).toMatchObject({
      class: 'breaking',
      message:
        'GET /pet/{petId}: response field `status` gained the value `adopted` → `Pet.status` (enum PetStatus) would fail to serialize',
      affects: ['Pet.status'],
    });
  });

  test('an unchanged document served live exits 0', async () => {
    served = gatewayDocument();
    const run = await runCheck([`${origin}/api/v3/openapi.json`]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('0 breaking, 0 dangerous, 0 safe: no breaking change');
  });

  test("the reference pet store's document served live reads as its file does", async () => {
    served = referencePetstoreDocument();
    const live = await runCheck([`${origin}/api/v3/openapi.json`, '--json']);
    const file = await runCheck([documents.write(referencePetstoreDocument(), 'reference-petstore.yaml'), '--json']);
    expect(live).toMatchObject({ code: 0, stderr: '' });
    expect(notSafe(JSON.parse(live.stdout) as Change[])).toEqual(REFERENCE_PETSTORE_DANGEROUS);
    expect(live.stdout).toBe(file.stdout);
  });

  test('a URL that answers an error status is an input error (exit 2)', async () => {
    const run = await runCheck([`${origin}/missing.json`]);
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: `check:upstream: cannot fetch ${origin}/missing.json: it answered 404\n`,
    });
  });

  test('a URL where nothing listens is an input error (exit 2)', async () => {
    const { server: closed, url } = await listen(() => undefined);
    await stop(closed);
    const run = await runCheck([`${url}/api/v3/openapi.json`]);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(new RegExp(`^check:upstream: cannot fetch ${url}/api/v3/openapi.json: .*ECONNREFUSED`));
  });
});

describe("the reference servers' documents", () => {
  test('the public pet store: nothing breaking; three dangerous differences, the rest safe', async () => {
    const run = await runCheck([documents.write(referencePetstoreDocument(), 'reference-petstore.yaml'), '--json']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const changes = JSON.parse(run.stdout) as Change[];
    expect(notSafe(changes)).toEqual(REFERENCE_PETSTORE_DANGEROUS);
    // Among the safe ones: photoUrls is required (the gateway always sends it), a status is one
    // value per call, deletePet takes the bearer token only (which the gateway sends), the upload
    // answers an ApiResponse (the Pet fields the gateway does not read in it are gone), and the
    // login and logout operations the gateway does not use.
    expect(changes.filter((change) => change.class === 'safe').map((change) => change.message)).toEqual([
      'PUT /pet: request body field `photoUrls` is now required → the gateway always sends it (`PetInput.photoUrls` ([String!]!) is required)',
      'POST /pet: request body field `photoUrls` is now required → the gateway always sends it (`PetInput.photoUrls` ([String!]!) is required)',
      'GET /pet/findByStatus: query parameter `status` changed from form to form, exploded → the gateway sends one value per call, written the same either way',
      'GET /pet/findByStatus: query parameter `status` changed from a list to one value → the gateway sends one value per call',
      'POST /pet/{petId}: query parameter `status` is no longer limited to `available`, `pending`, `sold` → the upstream takes more values than the gateway sends',
      'DELETE /pet/{petId}: header parameter `api_key` was added, optional → the gateway does not send it',
      'DELETE /pet/{petId}: security changed from header api_key or bearer to bearer → the credential the gateway sends still meets it',
      'POST /pet/{petId}/uploadImage: response field `id` was removed → the gateway does not read it',
      'POST /pet/{petId}/uploadImage: response field `category` was removed → the gateway does not read it',
      'POST /pet/{petId}/uploadImage: response field `name` was removed → the gateway does not read it',
      'POST /pet/{petId}/uploadImage: response field `photoUrls` was removed → the gateway does not read it',
      'POST /pet/{petId}/uploadImage: response field `tags` was removed → the gateway does not read it',
      'POST /pet/{petId}/uploadImage: response field `status` was removed → the gateway does not read it',
      'POST /store/order: response field `status` is now limited to `placed`, `approved`, `delivered` → fewer values than the gateway reads',
      'GET /store/order/{orderId}: response field `status` is now limited to `placed`, `approved`, `delivered` → fewer values than the gateway reads',
      'POST /user/createWithList: answer also comes as application/xml → the gateway does not ask for it',
      'GET /user/login: operation added → the gateway does not call it',
      'GET /user/logout: operation added → the gateway does not call it',
    ]);
  });

  test('the plant area sample: only operations the gateway does not call are added', async () => {
    // As JSON, the way the sample is published.
    const file = documents.write(JSON.stringify(referencePlantsDocument(), null, 2), 'reference-plants.json');
    const run = await runCheck([file]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        `${file} compared with schema/plants.openapi.yaml`,
        '',
        'safe (2):',
        '  GET /plants: operation added → the gateway does not call it',
        '  DELETE /plants/{id}: operation added → the gateway does not call it',
        '',
        '0 breaking, 0 dangerous, 2 safe: no breaking change',
        '',
      ].join('\n'),
    );
  });
});
