/**
 * The "direct REST" contender of the fan-out scenarios (3 and 4): what an application would
 * do without the gateway, written the minimal way. A plain node:http server; per request it
 * makes the fewest REST calls that answer it, concurrently, over one keep-alive undici pool
 * of the same size as the gateway's (`UPSTREAM_CONNECTIONS`, 32), parses the JSON and answers
 * with the combined JSON. No validation, no schema, no error mapping: the floor a gateway is
 * compared with.
 *
 * - `GET /orders`: `GET /store/order/{id}` for orders 1–50, then `GET /pet/{id}` for their
 *   distinct pets (10): two dependent waves, 60 calls.
 * - `GET /entities`: `GET /pet/{id}` for the 50 distinct ids of the 100 representations, one
 *   wave, 50 calls; the answer lists the 100 in order.
 * - `GET /pets` (scenario 5): `GET /pet/findByStatus` for each of the three statuses, one wave,
 *   3 calls; the answer lists the pets of all three.
 *
 * Usage: tsx bench/direct-client.ts <petstoreUrl>. Prints one JSON line `{ url }` when listening.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { CREDENTIAL_HEADERS, ENTITY_IDS } from './scenarios.js';

const petstoreUrl = new URL(process.argv[2] ?? '');
const basePath = petstoreUrl.pathname.replace(/\/+$/, '');
const pool = new Pool(petstoreUrl.origin, { connections: 32, keepAliveTimeout: 30_000 });

type Json = Record<string, unknown>;

async function get(path: string, headers: Record<string, string> = {}): Promise<Json> {
  const response = await pool.request({
    method: 'GET',
    path: basePath + path,
    headers: { accept: 'application/json', ...headers },
  });
  if (response.statusCode !== 200) {
    await response.body.dump();
    throw new Error(`GET ${path}: ${response.statusCode}`);
  }
  return (await response.body.json()) as Json;
}

const getPet = (id: string) => get(`/pet/${id}`, { api_key: CREDENTIAL_HEADERS.api_key });

async function orders(): Promise<unknown> {
  const list = await Promise.all(Array.from({ length: 50 }, (_, index) => get(`/store/order/${index + 1}`)));
  const petIds = [...new Set(list.map((order) => String(order['petId'])))];
  const pets = new Map(await Promise.all(petIds.map(async (id) => [id, await getPet(id)] as const)));
  return list.map((order) => ({ ...order, pet: pets.get(String(order['petId'])) }));
}

async function entities(): Promise<unknown> {
  const ids = [...new Set(ENTITY_IDS)];
  const pets = new Map(await Promise.all(ids.map(async (id) => [id, await getPet(id)] as const)));
  return ENTITY_IDS.map((id) => pets.get(id));
}

async function pets(): Promise<unknown> {
  const statuses = ['available', 'pending', 'sold'];
  const lists = await Promise.all(
    statuses.map((status) =>
      get(`/pet/findByStatus?status=${status}`, { authorization: CREDENTIAL_HEADERS.authorization }),
    ),
  );
  return lists.flatMap((list) => (Array.isArray(list) ? (list as unknown[]) : []));
}

const HANDLERS: Record<string, () => Promise<unknown>> = { '/orders': orders, '/entities': entities, '/pets': pets };

const server = createServer((request, response) => {
  const handler = HANDLERS[request.url ?? ''];
  if (handler === undefined) {
    response.writeHead(404).end();
    return;
  }
  handler().then(
    (result) => {
      const text = JSON.stringify(result);
      response
        .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
        .end(text);
    },
    (error: unknown) => {
      response
        .writeHead(502, { 'content-type': 'text/plain' })
        .end(error instanceof Error ? error.message : 'upstream failed');
    },
  );
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close();
  void pool.close().then(() => process.exit(0));
});
