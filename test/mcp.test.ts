/**
 * The MCP endpoint (MCP=true) against the embedded emulator: the default tools and their input
 * schemas, tool calls run through the gateway's own pipeline with the caller's credentials (the
 * answer, and what the upstream received), the refusals the specification asks for, and the same
 * conversation held by a second client that speaks JSON-RPC over fetch without the SDK.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createGateway } from '../src/gateway.js';
import {
  ALL_CREDENTIALS,
  API_KEY,
  BEARER,
  expectedGet,
  startStack,
  summary,
  testConfig,
  useStack,
  type Stack,
} from './helpers/stack.js';
import { DEFAULT_TOOLS, GET_INVENTORY, GET_PET_1 } from './helpers/answers.js';
import { until } from './helpers/clock.js';
import { nginxBinary, startNginx, type Nginx } from './helpers/nginx.js';
import { PROJECT_ROOT } from './helpers/process.js';
import { freePort } from './helpers/redis-server.js';

const stack = useStack({ mcp: true });

/** The MCP endpoint of a stack. */
const mcpUrl = (of: Stack) => new URL('/mcp', of.url);

/** A folder of its own under the system's temporary folder, removed after the file's tests. */
const folders: string[] = [];
function temporaryFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'mcp-operations-'));
  folders.push(folder);
  return folder;
}
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** An SDK client connected over Streamable HTTP, sending `headers` with every request. */
async function connect(of: Stack, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(of), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

/** The text of a tool result's first content item. */
function textOf(result: Record<string, unknown>): string {
  const [first] = (result['content'] ?? []) as { type: string; text?: string }[];
  return first?.type === 'text' ? (first.text ?? '') : '';
}

describe('tools/list', () => {
  it('lists the default tools, queries only, with schemas derived from their variables', async () => {
    const client = await connect(stack);

    const { tools } = await client.listTools();

    expect(tools.map((tool) => tool.name).sort()).toEqual(DEFAULT_TOOLS);
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName['GetPet']?.inputSchema).toEqual({
      type: 'object',
      properties: { id: { type: 'string', description: 'Identifier of the pet (int64).' } },
      required: ['id'],
      additionalProperties: false,
    });
    expect(byName['FindPetsByStatus']?.inputSchema).toEqual({
      type: 'object',
      properties: {
        status: {
          type: 'array',
          items: { type: 'string', enum: ['AVAILABLE', 'PENDING', 'SOLD'], description: expect.any(String) },
          description: 'Statuses to match.',
        },
      },
      required: ['status'],
      additionalProperties: false,
    });
    expect(byName['GetInventory']?.inputSchema).toEqual({
      type: 'object',
      properties: {},
      additionalProperties: false,
    });
    expect(byName['GetUser']?.inputSchema).toEqual({
      type: 'object',
      properties: { username: { type: 'string', description: 'The user name.' } },
      required: ['username'],
      additionalProperties: false,
    });
  });

  it("describes a tool by its operation's comment, else by its root field's description, and marks queries read-only", async () => {
    const client = await connect(stack);

    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));

    expect(byName['GetInventory']?.description).toBe(
      'How many pets the store holds, by status. Needs the api_key header.',
    );
    expect(byName['GetOrder']?.description).toBe(
      'One order by id (`GET /store/order/{orderId}`); null when the order does not exist.',
    );
    expect(byName['GetPet']?.annotations).toEqual({ title: 'Get Pet', readOnlyHint: true, openWorldHint: false });
  });
});

describe('the schema as a resource (INTROSPECTION)', () => {
  it('offers the SDL as graphql://schema while introspection is on', async () => {
    const client = await connect(stack);

    const { resources } = await client.listResources();
    const { contents } = await client.readResource({ uri: 'graphql://schema' });

    expect(resources).toEqual([expect.objectContaining({ uri: 'graphql://schema', mimeType: 'application/graphql' })]);
    expect(contents[0]).toMatchObject({ uri: 'graphql://schema', text: expect.stringContaining('type Pet') });
    await expect(client.readResource({ uri: 'graphql://other' })).rejects.toMatchObject({ code: -32002 });
  });

  it('offers no resources when introspection is off', async () => {
    const closed = await startStack({ mcp: true, introspection: false }, stack.emulator);
    try {
      const client = await connect(closed);

      expect(client.getServerCapabilities()?.resources).toBeUndefined();
      await expect(client.listResources()).rejects.toMatchObject({ code: -32601 });
    } finally {
      await closed.close();
    }
  });
});

describe('tools/call', () => {
  it('GetPet returns the pet, and the upstream received GET /pet/1 with the api_key only', async () => {
    const client = await connect(stack, ALL_CREDENTIALS);

    const result = await client.callTool({ name: 'GetPet', arguments: { id: '1' } });

    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(GET_PET_1);
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/1', 'api_key')]);
  });

  it('GetPet with only a bearer token forwards it, as GET /pet/{petId} declares either', async () => {
    const client = await connect(stack, { authorization: `Bearer ${BEARER}` });

    const result = await client.callTool({ name: 'GetPet', arguments: { id: '2' } });

    expect(result.structuredContent).toEqual({ pet: expect.objectContaining({ id: '2', name: 'Cat 2' }) });
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/2', 'bearer')]);
  });

  it('GetInventory without api_key is a tool error naming the header, and calls nothing', async () => {
    const client = await connect(stack, { authorization: `Bearer ${BEARER}` });

    const result = await client.callTool({ name: 'GetInventory', arguments: {} });

    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^GetInventory needs the api_key header/);
    expect(stack.upstream()).toEqual([]);
  });

  it('GetInventory with api_key returns the counts, and only the api_key went upstream', async () => {
    const client = await connect(stack, { api_key: API_KEY });

    const result = await client.callTool({ name: 'GetInventory', arguments: {} });

    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(GET_INVENTORY);
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/store/inventory', 'api_key')]);
  });

  it('FindPetsByStatus without a bearer token names the Authorization header', async () => {
    const client = await connect(stack, { api_key: API_KEY });

    const result = await client.callTool({ name: 'FindPetsByStatus', arguments: { status: ['SOLD'] } });

    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^FindPetsByStatus needs the Authorization header \(Authorization: Bearer <token>\)/,
    );
    expect(stack.upstream()).toEqual([]);
  });

  it('FindPetsByStatus sends the enum value as the upstream spells it, with the bearer token only', async () => {
    const client = await connect(stack, ALL_CREDENTIALS);

    const result = await client.callTool({ name: 'FindPetsByStatus', arguments: { status: ['SOLD'] } });

    expect(result.isError).toBeFalsy();
    const { petsByStatus } = result.structuredContent as { petsByStatus: { status: string }[] };
    expect(petsByStatus.length).toBeGreaterThan(0);
    expect(petsByStatus.every((pet) => pet.status === 'SOLD')).toBe(true);
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/findByStatus', 'bearer', 'status=sold')]);
  });

  it('GetUser returns the user, with no credential sent upstream (GET /user/{username} declares none)', async () => {
    const client = await connect(stack, ALL_CREDENTIALS);

    const result = await client.callTool({ name: 'GetUser', arguments: { username: 'user1' } });

    expect(result.structuredContent).toEqual({ user: expect.objectContaining({ username: 'user1' }) });
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/user/user1', 'none')]);
  });

  it("a GraphQL error is a tool error with its message and code, from the gateway's own validation", async () => {
    const client = await connect(stack, ALL_CREDENTIALS);

    const result = await client.callTool({ name: 'GetOrder', arguments: { id: '99999999999999999999' } });

    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'id must be an integer from -9223372036854775808 to 9223372036854775807, got "99999999999999999999" (BAD_USER_INPUT, at order)',
    );
    expect(stack.upstream()).toEqual([]);
  });

  it('a call is a GraphQL request like any other: counted in /metrics by operation name, and as a tool call', async () => {
    const client = await connect(stack, ALL_CREDENTIALS);

    await client.callTool({ name: 'GetPet', arguments: { id: '1' } });
    await client.callTool({ name: 'GetInventory', arguments: { id: 'x' } });
    const metrics = await (await fetch(new URL('/metrics', stack.url))).text();

    expect(metrics).toMatch(
      /^graphql_operations_total\{operation_name="GetPet",operation_type="query",result="success"\} [1-9]/m,
    );
    expect(metrics).toMatch(/^mcp_tool_calls_total\{tool="GetPet",outcome="ok"\} [1-9]/m);
    expect(metrics).toMatch(/^mcp_tool_calls_total\{tool="GetInventory",outcome="invalid_arguments"\} [1-9]/m);
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/1', 'api_key')]);
  });

  it('keeps the HTTP lane on: the endpoint adds no request hook that sends every request to yoga', () => {
    const gateway = createGateway(
      testConfig({ petstoreUrl: 'http://127.0.0.1:9/api/v3', plantsUrl: 'http://127.0.0.1:9', mcp: true }),
    );

    expect(gateway.yogaOnly).toEqual([]);
    return gateway.close();
  });
});

describe('refusals', () => {
  it('invalid arguments are a tool error the agent can correct (MCP 2025-11-25), and nothing is called', async () => {
    const client = await connect(stack, ALL_CREDENTIALS);

    const wrongType = await client.callTool({ name: 'GetPet', arguments: { id: 1 } });
    const missing = await client.callTool({ name: 'GetPet', arguments: {} });
    const badEnum = await client.callTool({ name: 'FindPetsByStatus', arguments: { status: ['LOST'] } });

    expect(wrongType).toMatchObject({ isError: true });
    expect(textOf(wrongType)).toBe('Invalid arguments for GetPet: /id must be string');
    expect(textOf(missing)).toBe("Invalid arguments for GetPet: arguments must have required property 'id'");
    expect(textOf(badEnum)).toMatch(
      /^Invalid arguments for FindPetsByStatus: \/status\/0 must be equal to one of the allowed values/,
    );
    expect(stack.upstream()).toEqual([]);
  });

  it('an unknown tool is a JSON-RPC error -32602', async () => {
    const client = await connect(stack, ALL_CREDENTIALS);

    await expect(client.callTool({ name: 'AddPet', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    expect(stack.upstream()).toEqual([]);
  });

  it('a page of another origin is refused with 403; no Origin, or the own address, is served', async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
    });
    const post = (origin?: string) =>
      fetch(mcpUrl(stack), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(origin ? { origin } : {}),
        },
        body: initialize,
      });

    const foreign = await post('http://evil.example');
    const rebound = await post(`http://rebound.example:${mcpUrl(stack).port}`);
    const own = await post(mcpUrl(stack).origin);
    const none = await post();

    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    expect(rebound.status).toBe(403);
    expect(own.status).toBe(200);
    expect(none.status).toBe(200);
  });

  it('a page of one of CORS_ORIGINS is served, its preflight allowing the MCP headers', async () => {
    const cors = await startStack({ mcp: true, corsOrigins: ['https://app.example'] }, stack.emulator);
    try {
      const preflight = await fetch(mcpUrl(cors), {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type, api_key, mcp-protocol-version',
        },
      });
      const client = await connect(cors, { origin: 'https://app.example', api_key: API_KEY });
      const result = await client.callTool({ name: 'GetInventory', arguments: {} });

      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-headers')).toContain('mcp-protocol-version');
      expect(result.structuredContent).toMatchObject({ inventory: { entries: expect.any(Array) } });
      expect(cors.upstream().map(summary)).toEqual([expectedGet('/api/v3/store/inventory', 'api_key')]);
    } finally {
      await cors.close();
    }
  });

  it('GET /mcp is 405: a stateless server opens no stream', async () => {
    const response = await fetch(mcpUrl(stack), { headers: { accept: 'text/event-stream' } });

    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('a body over REQUEST_MAX_BYTES is refused with 413, a body that is not JSON with -32700', async () => {
    const post = (body: string) =>
      fetch(mcpUrl(stack), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body,
      });

    const large = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1_100_000) } }),
    );
    const garbled = await post('{"jsonrpc": "2.0", ');

    expect(large.status).toBe(413);
    expect(garbled.status).toBe(400);
    expect(await garbled.json()).toMatchObject({ error: { code: -32700 } });
  });
});

describe('MCP_MUTATIONS=all', () => {
  const writable = useStack({ mcp: true, mcpMutations: 'all' });

  it('lists AddPet, marked as a write that adds, and its input object with its required fields', async () => {
    const client = await connect(writable, ALL_CREDENTIALS);

    const { tools } = await client.listTools();
    const addPet = tools.find((tool) => tool.name === 'AddPet');

    expect(addPet?.annotations).toEqual({
      title: 'Add Pet',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    });
    expect(addPet?.inputSchema).toMatchObject({
      required: ['input'],
      properties: {
        input: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            photoUrls: { type: 'array', items: { type: 'string' }, default: [] },
            status: { type: 'string', enum: ['AVAILABLE', 'PENDING', 'SOLD'] },
          },
        },
      },
    });
  });

  it('AddPet adds the pet with the bearer token only', async () => {
    const client = await connect(writable, ALL_CREDENTIALS);

    const result = await client.callTool({
      name: 'AddPet',
      arguments: { input: { id: '9001', name: 'Rex', status: 'AVAILABLE' } },
    });

    expect(result.structuredContent).toEqual({ addPet: expect.objectContaining({ id: '9001', name: 'Rex' }) });
    const [call] = writable.upstream().map(summary);
    expect(call).toMatchObject({
      method: 'POST',
      path: '/api/v3/pet',
      authorization: `Bearer ${BEARER}`,
      apiKey: undefined,
    });
  });
});

describe("MCP_OPERATIONS: the operator's own folder", () => {
  const folder = temporaryFolder();
  writeFileSync(
    join(folder, 'names.graphql'),
    '# The names of several pets, by id.\nquery PetNames($ids: [ID!]!) { pets(ids: $ids) { id name } }\n',
  );
  const own = useStack({ mcp: true, mcpOperations: folder });

  it('serves its operations instead of the default ones', async () => {
    const client = await connect(own, ALL_CREDENTIALS);

    const { tools } = await client.listTools();
    const result = await client.callTool({ name: 'PetNames', arguments: { ids: ['1', '2'] } });

    expect(tools).toEqual([
      expect.objectContaining({
        name: 'PetNames',
        description: 'The names of several pets, by id.',
        inputSchema: {
          type: 'object',
          properties: {
            ids: { type: 'array', items: { type: 'string' }, description: 'Identifiers of the pets (int64).' },
          },
          required: ['ids'],
          additionalProperties: false,
        },
      }),
    ]);
    expect(result.structuredContent).toEqual({
      pets: [
        { id: '1', name: 'Cat 1' },
        { id: '2', name: 'Cat 2' },
      ],
    });
    expect(
      own
        .upstream()
        .map(summary)
        .sort((a, b) => a.path.localeCompare(b.path)),
    ).toEqual([expectedGet('/api/v3/pet/1', 'api_key'), expectedGet('/api/v3/pet/2', 'api_key')]);
  });

  it.each([
    ['an operation the schema refuses', 'query Broken { pet { nope } }', /broken\.graphql: Broken: .*nope/],
    ['an operation without a name', '{ inventory { entries { status } } }', /without a name/],
    ['an upload', 'mutation Up($file: File!) { uploadPetImage(petId: 1, file: $file) { code } }', /File/],
  ])('stops the start, naming the file, for %s', (_what, text, message) => {
    const bad = temporaryFolder();
    writeFileSync(join(bad, 'broken.graphql'), text);
    const config = testConfig({ petstoreUrl: 'http://127.0.0.1:9/api/v3', plantsUrl: 'http://127.0.0.1:9' });

    expect(() => createGateway({ ...config, mcp: true, mcpOperations: bad, mcpMutations: 'all' })).toThrow(message);
  });

  it('stops the start when MCP_MUTATIONS names no mutation of the operations', () => {
    const config = testConfig({ petstoreUrl: 'http://127.0.0.1:9/api/v3', plantsUrl: 'http://127.0.0.1:9' });

    expect(() => createGateway({ ...config, mcp: true, mcpMutations: ['AddPets'] })).toThrow(
      "MCP_MUTATIONS names AddPets, which is no mutation of the tools' operations",
    );
  });
});

describe('with TRUSTED_DOCUMENTS', () => {
  const folder = temporaryFolder();
  writeFileSync(join(folder, 'pet.graphql'), 'query PetName($id: ID!) { pet(id: $id) { name } }\n');
  // The manifest holds it as a build wrote it, in another layout.
  const text = 'query PetName($id: ID!) {\n  pet(id: $id) {\n    name\n  }\n}';
  const hash = createHash('sha256').update(text).digest('hex');
  const manifest = join(folder, 'manifest.json');
  writeFileSync(manifest, JSON.stringify({ [hash]: text }));
  const trusted = useStack({ mcp: true, mcpOperations: folder, trustedDocuments: manifest });

  it("a tool call names its document by the manifest's hash, and runs", async () => {
    const client = await connect(trusted, ALL_CREDENTIALS);

    const result = await client.callTool({ name: 'PetName', arguments: { id: '1' } });

    expect(result.structuredContent).toEqual({ pet: { name: 'Cat 1' } });
    expect(trusted.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/1', 'api_key')]);
  });

  it('a tool whose document the manifest does not hold stops the start', () => {
    const config = testConfig({ petstoreUrl: 'http://127.0.0.1:9/api/v3', plantsUrl: 'http://127.0.0.1:9' });

    expect(() => createGateway({ ...config, mcp: true, trustedDocuments: manifest })).toThrow(
      /GetPet: TRUSTED_DOCUMENTS is set and its manifest does not hold this operation/,
    );
  });
});

describe('MCP_AUTHORIZATION_SERVERS: where agents get a bearer token (RFC 9728)', () => {
  const signed = useStack({ mcp: true, mcpAuthorizationServers: ['https://auth.example/realms/pets'] });
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'agent', version: '1' } },
  });
  const post = (headers: Record<string, string>) =>
    fetch(mcpUrl(signed), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: initialize,
    });

  it('serves the protected resource metadata naming the authorization servers', async () => {
    const response = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', signed.url));

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      resource: mcpUrl(signed).href,
      authorization_servers: ['https://auth.example/realms/pets'],
      bearer_methods_supported: ['header'],
      resource_name: 'petstore-gateway',
    });
  });

  it('answers a POST with no credential 401, pointing to the metadata; one with a credential is served', async () => {
    const bare = await post({});
    const withKey = await post({ api_key: API_KEY });
    const withToken = await post({ authorization: `Bearer ${BEARER}` });

    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${mcpUrl(signed).origin}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect([withKey.status, withToken.status]).toEqual([200, 200]);
    expect(signed.upstream()).toEqual([]);
  });

  it('is not there when the setting is not', async () => {
    const response = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', stack.url));

    expect(response.status).toBe(404);
  });
});

/** A client of its own: JSON-RPC over fetch, as any MCP client speaks it, without the SDK. */
describe('a second client, without the SDK', () => {
  /** Posts one JSON-RPC message; the status and the parsed answer (none for a 202). */
  async function rpc(message: Record<string, unknown>, headers: Record<string, string> = {}) {
    const response = await fetch(mcpUrl(stack), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', ...message }),
    });
    const text = await response.text();
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
    };
  }

  it('initializes, lists the tools and calls one, each POST on its own (no session)', async () => {
    const initialized = await rpc({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    const notified = await rpc({ method: 'notifications/initialized' });
    const listed = await rpc({ id: 2, method: 'tools/list' });
    const called = await rpc(
      { id: 3, method: 'tools/call', params: { name: 'GetPet', arguments: { id: '3' } } },
      ALL_CREDENTIALS,
    );

    expect(initialized).toMatchObject({
      status: 200,
      type: expect.stringContaining('application/json'),
      body: {
        jsonrpc: '2.0',
        id: 1,
        result: {
          protocolVersion: '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'petstore-gateway' },
        },
      },
    });
    expect(notified.status).toBe(202);
    expect(listed.body).toMatchObject({
      id: 2,
      result: { tools: expect.arrayContaining([expect.objectContaining({ name: 'GetUser' })]) },
    });
    expect(called.body).toMatchObject({
      id: 3,
      result: { structuredContent: { pet: { id: '3', name: 'Cat 3' } } },
    });
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/3', 'api_key')]);
  });

  it('an unknown method is -32601', async () => {
    const answer = await rpc({ id: 7, method: 'prompts/list' });

    expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601 } });
  });
});

describe.skipIf(nginxBinary() === undefined)('two replicas behind the shipped nginx', () => {
  let replicas: Stack[] = [];
  let nginx: Nginx | undefined;
  afterAll(async () => {
    await nginx?.stop();
    // The second replica shares the first one's emulator: it goes first.
    for (const replica of replicas.reverse()) await replica.close();
  });

  it('both serve the tool calls of one client, which keeps no session', async () => {
    const first = await startStack({ mcp: true });
    replicas = [first, await startStack({ mcp: true }, first.emulator)];
    const upstreams = replicas.map((replica) => new URL(replica.url).host);
    nginx = await startNginx(nginxBinary() ?? '', readFileSync(`${PROJECT_ROOT}deploy/nginx.conf`, 'utf8'), {
      upstreams,
      port: await freePort(),
    });
    const client = new Client({ name: 'mcp-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', nginx.origin), { requestInit: { headers: ALL_CREDENTIALS } }),
    );
    clients.push(client);

    const ids = ['1', '2', '3', '4'];
    const results = [];
    for (const id of ids) results.push(await client.callTool({ name: 'GetPet', arguments: { id } }));

    expect(results.map((result) => (result.structuredContent as { pet: { id: string } }).pet.id)).toEqual(ids);
    const served = await until(() => {
      const calls = (nginx?.accessLog() ?? [])
        .map((line) => JSON.parse(line) as { method: string; uri: string; status: number; upstream: string })
        .filter((line) => line.method === 'POST' && line.uri === '/mcp' && line.status === 200);
      return calls.length >= ids.length + 1 ? new Set(calls.map((line) => line.upstream)) : undefined;
    }, 'nginx to log the MCP requests');
    expect(served).toEqual(new Set(upstreams));
    expect(
      first
        .upstream()
        .map(summary)
        .sort((a, b) => a.path.localeCompare(b.path)),
    ).toEqual(ids.map((id) => expectedGet(`/api/v3/pet/${id}`, 'api_key')));
  });
});
