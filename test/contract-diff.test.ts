/**
 * `npm run check:upstream`: an upstream's OpenAPI document compared with the gateway's, each
 * difference classed for this gateway and naming the GraphQL fields it affects. Each test edits a
 * copy of the gateway's own document in one way (the kind of change it is about), writes it to a
 * file and runs the command on it.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import type { Change } from '../src/contract/changes.js';
import { diffDocuments } from '../src/contract/openapi-diff.js';
import { createSchema } from '../src/schema.js';
import { at, gatewayDocument, runCheck, useEditedDocuments, type Document } from './helpers/openapi-edits.js';
import { PROJECT_ROOT } from './helpers/process.js';

const documents = useEditedDocuments();

/** The changes in the form a reader checks them: class, message, affected GraphQL coordinates. */
const summary = (changes: readonly Change[]) =>
  changes.map((change) => ({ class: change.class, message: change.message, affects: change.affects }));

const PET_READERS = ['Query.pet', 'Query.pets', 'Order.pet', 'Query._entities'];

describe('the gateway document against itself', () => {
  test('has no differences, and exits 0', async () => {
    const { code, changes } = await documents.changesOf(() => undefined);
    expect({ code, changes }).toEqual({ code: 0, changes: [] });
  });

  test('the plant area has none either', async () => {
    const { code, changes } = await documents.changesOf(() => undefined, 'plants');
    expect({ code, changes }).toEqual({ code: 0, changes: [] });
  });
});

describe('operations', () => {
  test('a used operation removed is breaking, naming the GraphQL field that calls it', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      delete at(document, 'paths')['/store/inventory'];
    });
    expect(code).toBe(1);
    expect(summary(changes)).toEqual([
      {
        class: 'breaking',
        message:
          'GET /store/inventory: operation removed → the gateway calls it for `Query.inventory`, which would fail',
        affects: ['Query.inventory'],
      },
    ]);
  });

  test('a used operation moved to another path is breaking, and its new path an added operation', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      const paths = at(document, 'paths');
      paths['/store/stock'] = paths['/store/inventory'];
      delete paths['/store/inventory'];
    });
    expect(code).toBe(1);
    expect(changes.map((change) => [change.class, change.message])).toEqual([
      [
        'breaking',
        'GET /store/inventory: operation moved to GET /store/stock → the gateway calls it for `Query.inventory`, which would fail',
      ],
      ['safe', 'GET /store/stock: operation added → the gateway does not call it'],
    ]);
  });

  test('an operation added is safe', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      at(document, 'paths')['/store/extra'] = {
        get: { operationId: 'extra', responses: { '200': { description: 'more' } } },
      };
    });
    expect({ code, changes: summary(changes) }).toEqual({
      code: 0,
      changes: [
        { class: 'safe', message: 'GET /store/extra: operation added → the gateway does not call it', affects: [] },
      ],
    });
  });

  test('an operation the gateway does not use, removed, is safe', () => {
    // The gateway's documents describe only operations it uses: this one has an extra operation to lose.
    const base = gatewayDocument();
    at(base, 'paths')['/user/login'] = {
      get: { operationId: 'loginUser', responses: { '200': { description: 'a session' } } },
    };
    const changes = diffDocuments({ area: 'petstore', base, upstream: gatewayDocument(), schema: createSchema() });
    expect(summary(changes)).toEqual([
      { class: 'safe', message: 'GET /user/login: operation removed → the gateway does not call it', affects: [] },
    ]);
  });

  test('a used operation marked deprecated is dangerous', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      at(document, 'paths', '/user/{username}', 'get')['deprecated'] = true;
    });
    expect({ code, changes: summary(changes) }).toEqual({
      code: 0,
      changes: [
        {
          class: 'dangerous',
          message:
            'GET /user/{username}: operation deprecated → the gateway calls it for `Query.user`, `Query._entities`; it may be removed',
          affects: ['Query.user', 'Query._entities'],
        },
      ],
    });
  });
});

describe('answers', () => {
  test('a response enum gaining a value the GraphQL enum lacks is breaking: the field would fail to serialize', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      (at(document, 'components', 'schemas', 'PetStatus')['enum'] as string[]).push('adopted');
    });
    expect(code).toBe(1);
    const breaking = changes.filter((change) => change.class === 'breaking');
    // Every operation whose answer is a Pet (or a list of them).
    expect(breaking.map((change) => change.operation)).toEqual([
      'PUT /pet',
      'POST /pet',
      'GET /pet/findByStatus',
      'GET /pet/findByTags',
      'GET /pet/{petId}',
      'POST /pet/{petId}',
    ]);
    expect(summary(breaking.filter((change) => change.operation === 'GET /pet/{petId}'))).toEqual([
      {
        class: 'breaking',
        message:
          'GET /pet/{petId}: response field `status` gained the value `adopted` → `Pet.status` (enum PetStatus) would fail to serialize',
        affects: ['Pet.status'],
      },
    ]);
    expect(breaking.find((change) => change.operation === 'GET /pet/findByStatus')?.change).toBe(
      'response field `[].status` gained the value `adopted`',
    );
    // What the gateway sends is unaffected: it sends only the values it knows.
    expect(
      changes.filter((change) => change.class === 'safe' && change.affects.length > 0).map((change) => change.message),
    ).toEqual([
      'PUT /pet: request body field `status` gained the value `adopted` → the gateway sends only the values it knows',
      'POST /pet: request body field `status` gained the value `adopted` → the gateway sends only the values it knows',
      'GET /pet/findByStatus: query parameter `status` items gained the value `adopted` → the gateway sends only the values it knows',
      'POST /pet/{petId}: query parameter `status` gained the value `adopted` → the gateway sends only the values it knows',
    ]);
  });

  test('a type change of a used field is breaking, of a field the graph does not read safe', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      at(document, 'components', 'schemas', 'Order', 'properties')['quantity'] = { type: 'string' };
    });
    expect(code).toBe(1);
    expect(summary(changes)).toEqual([
      {
        class: 'breaking',
        message:
          'POST /store/order: request body field `quantity` changed type from integer (int32) to string → the gateway sends integer (int32) from `OrderInput.quantity` (Int)',
        affects: ['OrderInput.quantity'],
      },
      {
        class: 'breaking',
        message:
          'POST /store/order: response field `quantity` changed type from integer (int32) to string → `Order.quantity` (Int) would fail to read it',
        affects: ['Order.quantity'],
      },
      {
        class: 'breaking',
        message:
          'GET /store/order/{orderId}: response field `quantity` changed type from integer (int32) to string → `Order.quantity` (Int) would fail to read it',
        affects: ['Order.quantity'],
      },
    ]);
  });

  test('a field the graph does not read changing type is safe in answers, breaking where the gateway sends it', async () => {
    // A user's password: sent from UserInput.password, never read back (User has no password field).
    const { changes } = await documents.changesOf((document) => {
      at(document, 'components', 'schemas', 'User', 'properties')['password'] = { type: 'integer' };
    });
    expect(changes.filter((change) => change.operation === 'GET /user/{username}')).toMatchObject([
      { class: 'safe', change: 'response field `password` changed type from string to integer', affects: [] },
    ]);
    expect(changes.filter((change) => change.operation === 'POST /user')).toMatchObject([
      { class: 'breaking', affects: ['UserInput.password'] },
      { class: 'safe', affects: [] },
    ]);
  });

  test('an int32 answer becoming int64 is breaking for an Int field', async () => {
    const { changes } = await documents.changesOf((document) => {
      at(document, 'components', 'schemas', 'Order', 'properties', 'quantity')['format'] = 'int64';
    });
    expect(summary(changes.filter((change) => change.operation === 'GET /store/order/{orderId}'))).toEqual([
      {
        class: 'breaking',
        message:
          'GET /store/order/{orderId}: response field `quantity` changed format from int32 to int64 → `Order.quantity` (Int) would fail to serialize values outside int32',
        affects: ['Order.quantity'],
      },
    ]);
    expect(
      changes.find((change) => change.operation === 'POST /store/order' && change.class === 'dangerous')?.affects,
    ).toEqual(['OrderInput.quantity']);
  });

  test('a field removed from an answer: dangerous when its GraphQL field is nullable, breaking when it is non-null', async () => {
    const pets = await documents.changesOf((document) => {
      delete at(document, 'components', 'schemas', 'Pet', 'properties')['name'];
    });
    expect(pets.code).toBe(0);
    expect(summary(pets.changes.filter((change) => change.operation === 'GET /pet/{petId}'))).toEqual([
      {
        class: 'dangerous',
        message: 'GET /pet/{petId}: response field `name` was removed → `Pet.name` (String) would be null',
        affects: ['Pet.name'],
      },
    ]);
    const plants = await documents.changesOf((document) => {
      delete at(document, 'components', 'schemas', 'Plant', 'properties')['name'];
    }, 'plants');
    expect(plants.code).toBe(1);
    expect(summary(plants.changes)).toEqual([
      {
        class: 'breaking',
        message: 'POST /plants: response field `name` was removed → `Plant.name` (String!) is non-null and would fail',
        affects: ['Plant.name'],
      },
      {
        class: 'dangerous',
        message:
          'POST /plants: request body field `name` was removed → the gateway still sends it from `NewPlantInput.name` (String!); the upstream may refuse or drop it',
        affects: ['NewPlantInput.name'],
      },
    ]);
  });

  test('the inventory map: its values changing type break InventoryEntry.quantity', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      at(document, 'components', 'schemas', 'Inventory')['additionalProperties'] = { type: 'string' };
    });
    expect({ code, changes: summary(changes) }).toEqual({
      code: 1,
      changes: [
        {
          class: 'breaking',
          message:
            'GET /store/inventory: response values changed type from integer (int32) to string → `InventoryEntry.quantity` (Int!) would fail to read it',
          affects: ['InventoryEntry.quantity'],
        },
      ],
    });
  });
});

describe('requests', () => {
  test('a new optional request field is safe', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      at(document, 'components', 'schemas', 'Order', 'properties')['note'] = { type: 'string' };
    });
    expect({ code, messages: changes.map((change) => `${change.class}: ${change.message}`) }).toEqual({
      code: 0,
      messages: [
        'safe: POST /store/order: request body field `note` was added, optional → the gateway does not send it',
        'safe: POST /store/order: response field `note` was added → the gateway does not read it (dropped when decoded)',
        'safe: GET /store/order/{orderId}: response field `note` was added → the gateway does not read it (dropped when decoded)',
      ],
    });
  });

  test('a new required request field the gateway never sends is breaking', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      const [idPart] = at(document, 'components', 'schemas', 'NewPlant')['allOf'] as Document[];
      if (idPart === undefined) throw new Error('NewPlant has no allOf parts');
      at(idPart, 'properties')['owner'] = { type: 'string' };
      idPart['required'] = ['id', 'owner'];
    }, 'plants');
    expect({ code, changes: summary(changes) }).toEqual({
      code: 1,
      changes: [
        {
          class: 'breaking',
          message:
            'POST /plants: request body field `owner` was added, required → the gateway never sends it, so every call would be refused',
          affects: ['Mutation.createPlant'],
        },
      ],
    });
  });

  test('a new required parameter is breaking for every GraphQL field that makes the call', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      at(document, 'paths', '/pet/{petId}', 'get')['parameters'] = [
        { name: 'tenant', in: 'query', required: true, schema: { type: 'string' } },
      ];
    });
    expect({ code, changes: summary(changes) }).toEqual({
      code: 1,
      changes: [
        {
          class: 'breaking',
          message:
            'GET /pet/{petId}: query parameter `tenant` was added, required → the gateway never sends it, so every call would be refused',
          affects: PET_READERS,
        },
      ],
    });
  });

  test('a parameter the gateway sends only sometimes becoming required is breaking, naming its argument', async () => {
    const { changes } = await documents.changesOf((document) => {
      const [name] = at(document, 'paths', '/pet/{petId}', 'post')['parameters'] as Document[];
      if (name === undefined) throw new Error('updatePetWithForm has no parameters');
      name['required'] = true;
    });
    expect(summary(changes)).toEqual([
      {
        class: 'breaking',
        message:
          'POST /pet/{petId}: query parameter `name` is now required → calls made without `Mutation.updatePetWithForm(name:)` would be refused',
        affects: ['Mutation.updatePetWithForm(name:)'],
      },
    ]);
  });

  test('an enum value the gateway can send, removed, is breaking for the arguments and inputs that carry it', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      at(document, 'components', 'schemas', 'PetStatus')['enum'] = ['available', 'pending'];
    });
    expect(code).toBe(1);
    expect(changes.filter((change) => change.class === 'breaking').map((change) => change.affects)).toEqual([
      ['PetInput.status'],
      ['PetInput.status'],
      ['Query.petsByStatus(status:)'],
      ['Mutation.updatePetWithForm(status:)'],
    ]);
    expect(changes.find((change) => change.operation === 'GET /pet/findByStatus')?.message).toBe(
      'GET /pet/findByStatus: query parameter `status` items lost the value `sold` → the gateway sends it for `Query.petsByStatus(status:)` (enum PetStatus); the upstream would refuse it',
    );
    // In answers a lost value is only one the gateway will not see.
    expect(changes.find((change) => change.operation === 'GET /pet/{petId}')?.class).toBe('safe');
  });

  test("a list parameter's style is safe when the gateway sends one value per call", async () => {
    const { code, changes } = await documents.changesOf((document) => {
      const [tags] = at(document, 'paths', '/pet/findByTags', 'get')['parameters'] as Document[];
      if (tags === undefined) throw new Error('findByTags has no parameters');
      tags['explode'] = false;
    });
    expect({ code, messages: changes.map((change) => `${change.class}: ${change.message}`) }).toEqual({
      code: 0,
      messages: [
        'safe: GET /pet/findByTags: query parameter `tags` changed from form, exploded to form → the gateway sends one value per call, written the same either way',
      ],
    });
  });

  test('the media type the gateway sends, removed, is breaking; another one dangerous', async () => {
    const json = await documents.changesOf((document) => {
      delete at(document, 'components', 'requestBodies', 'Pet', 'content')['application/json'];
    });
    expect({ code: json.code, changes: summary(json.changes) }).toEqual({
      code: 1,
      changes: [
        {
          class: 'breaking',
          message:
            'PUT /pet: request body no longer takes application/json → the gateway sends it, so every call would be refused',
          affects: ['Mutation.updatePet'],
        },
        {
          class: 'breaking',
          message:
            'POST /pet: request body no longer takes application/json → the gateway sends it, so every call would be refused',
          affects: ['Mutation.addPet'],
        },
      ],
    });
    const xml = await documents.changesOf((document) => {
      delete at(document, 'components', 'requestBodies', 'Pet', 'content')['application/xml'];
    });
    expect({ code: xml.code, classes: xml.changes.map((change) => change.class) }).toEqual({
      code: 0,
      classes: ['dangerous', 'dangerous'],
    });
    expect(xml.changes[0]?.message).toBe(
      'PUT /pet: request body no longer takes application/xml → calls fail when PETSTORE_BODY_FORMAT picks it',
    );
  });

  test('a body now required where the gateway sends none is breaking', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      at(document, 'paths', '/pet/{petId}', 'post')['requestBody'] = {
        required: true,
        content: { 'application/json': { schema: { type: 'object' } } },
      };
    });
    expect({ code, changes: summary(changes) }).toEqual({
      code: 1,
      changes: [
        {
          class: 'breaking',
          message:
            'POST /pet/{petId}: request body is now required → the gateway sends none, so every call would be refused',
          affects: ['Mutation.updatePetWithForm'],
        },
      ],
    });
  });
});

describe('security', () => {
  test('a credential required where the gateway sends none is breaking', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      at(document, 'paths', '/user/{username}', 'get')['security'] = [{ api_key: [] }];
    });
    expect({ code, changes: summary(changes) }).toEqual({
      code: 1,
      changes: [
        {
          class: 'breaking',
          message:
            'GET /user/{username}: security changed from no credential to header api_key → the gateway sends no credential, so every call would be refused',
          affects: ['Query.user', 'Query._entities'],
        },
      ],
    });
  });

  test('one of two accepted credentials dropped is dangerous: callers with only that one are refused', async () => {
    const { code, changes } = await documents.changesOf((document) => {
      at(document, 'paths', '/pet/{petId}', 'get')['security'] = [{ api_key: [] }];
    });
    expect({ code, changes: summary(changes) }).toEqual({
      code: 0,
      changes: [
        {
          class: 'dangerous',
          message:
            'GET /pet/{petId}: security changed from header api_key or bearer to header api_key → callers with only bearer would be refused',
          affects: PET_READERS,
        },
      ],
    });
  });

  test('an OAuth 2.0 scheme in place of HTTP bearer is the same credential: no difference', async () => {
    const { changes } = await documents.changesOf((document) => {
      at(document, 'components', 'securitySchemes')['petstore_auth'] = {
        type: 'oauth2',
        flows: { implicit: { authorizationUrl: 'https://example.test/oauth', scopes: { 'read:pets': 'read' } } },
      };
    });
    expect(changes).toEqual([]);
  });
});

describe('the command', () => {
  test('prints one line per difference, grouped by class, and a summary', async () => {
    const file = documents.write(
      (() => {
        const document = gatewayDocument();
        delete at(document, 'paths')['/store/inventory'];
        at(document, 'paths', '/pet/{petId}', 'get')['security'] = [{ api_key: [] }];
        at(document, 'paths')['/store/extra'] = { get: { responses: { '200': { description: 'more' } } } };
        return document;
      })(),
    );
    const run = await runCheck([file]);
    expect(run).toEqual({
      code: 1,
      stderr: '',
      stdout: [
        `${file} compared with schema/petstore.openapi.yaml`,
        '',
        'breaking (1):',
        '  GET /store/inventory: operation removed → the gateway calls it for `Query.inventory`, which would fail',
        '',
        'dangerous (1):',
        '  GET /pet/{petId}: security changed from header api_key or bearer to header api_key → callers with only bearer would be refused',
        '',
        'safe (1):',
        '  GET /store/extra: operation added → the gateway does not call it',
        '',
        '1 breaking, 1 dangerous, 1 safe: the gateway would break against this upstream',
        '',
      ].join('\n'),
    });
  });

  test('--json prints the differences as an array, with the operation, its id and the affected fields', async () => {
    const file = documents.write(
      (() => {
        const document = gatewayDocument();
        delete at(document, 'paths')['/store/inventory'];
        return document;
      })(),
    );
    const run = await runCheck([file, '--json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual([
      {
        class: 'breaking',
        operation: 'GET /store/inventory',
        operationId: 'getInventory',
        change: 'operation removed',
        effect: 'the gateway calls it for `Query.inventory`, which would fail',
        affects: ['Query.inventory'],
        message:
          'GET /store/inventory: operation removed → the gateway calls it for `Query.inventory`, which would fail',
      },
    ]);
  });

  test('--area picks the document to compare with; without it a document with /plants is the plant area', async () => {
    const plants = documents.write(gatewayDocument('plants'));
    expect(await runCheck([plants])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('schema/plants.openapi.yaml'),
    });
    // Compared with the pet store's document, the plant area's removes every operation the gateway uses there.
    const crossed = await runCheck([plants, '--area', 'petstore', '--json']);
    expect(crossed.code).toBe(1);
    expect(
      (JSON.parse(crossed.stdout) as Change[]).filter((change) => change.change === 'operation removed'),
    ).toHaveLength(17);
  });

  test.each([
    [['/nonexistent/openapi.yaml'], 'check:upstream: cannot read /nonexistent/openapi.yaml (ENOENT)\n'],
    [[join(PROJECT_ROOT, 'package.json')], 'is not an OpenAPI 3 document: it has no `openapi: 3.x` field'],
    [[], 'check:upstream: which document? Give a file or a URL\nusage: npm run check:upstream'],
    [['a.yaml', '--area', 'garden'], 'check:upstream: --area must be petstore or plants, got "garden"'],
    [['a.yaml', '--verbose'], 'check:upstream: unknown option --verbose'],
  ])('usage and input errors exit 2 with a clear message: %j', async (argv, message) => {
    const run = await runCheck(argv);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain(message);
  });

  test('a Swagger 2 document, and text that is not YAML, are input errors', async () => {
    const swagger = await runCheck([documents.write('swagger: "2.0"\npaths: {}\n')]);
    expect(swagger).toMatchObject({ code: 2, stdout: '' });
    expect(swagger.stderr).toContain(
      'is not an OpenAPI 3 document: it has no `openapi: 3.x` field (Swagger 2.0; convert it to OpenAPI 3 first)',
    );
    const broken = await runCheck([documents.write('openapi: [3.0\n  paths: {')]);
    expect(broken).toMatchObject({ code: 2, stdout: '' });
    expect(broken.stderr).toMatch(/is neither JSON nor YAML: /);
  });

  test('npm run check:upstream runs it as a process: exit 1 on a breaking change, 0 without', async () => {
    const edited = gatewayDocument();
    delete at(edited, 'paths')['/store/inventory'];
    const run = (file: string) =>
      promisify(execFile)('npm', ['run', '-s', 'check:upstream', '--', file], { cwd: PROJECT_ROOT }).then(
        (done) => ({ code: 0, stdout: done.stdout }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
    const [breaking, same] = await Promise.all([
      run(documents.write(edited)),
      run(join(PROJECT_ROOT, 'schema/petstore.openapi.yaml')),
    ]);
    expect(breaking.code).toBe(1);
    expect(breaking.stdout).toContain('GET /store/inventory: operation removed');
    expect(same).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('0 breaking, 0 dangerous, 0 safe: no breaking change'),
    });
  });
});
