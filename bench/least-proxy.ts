/**
 * The "least Node.js proxy" contender: the least work any gateway on Node.js does for a request,
 * with none of a GraphQL gateway's: node:http reads the POST and parses its JSON body, one undici
 * pool (keep-alive, as the gateway's) makes the REST call the scenario names, its JSON answer is
 * parsed, wrapped in `{ "data": … }`, serialised and written. No GraphQL, no validation, no
 * plugins, no log. Its distance from direct REST is what the runtime, the extra hop and this
 * machine cost before any gateway code runs; the gateway's distance from it is the gateway's own.
 *
 * The REST path of the scenario comes in the `x-rest-path` header; the credential headers are
 * forwarded. Usage: tsx bench/least-proxy.ts <petstore URL>; prints one JSON line `{ url }` when
 * listening; stops on SIGTERM.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const upstream = new URL(process.argv[2] ?? '');
const pool = new Pool(upstream.origin, { connections: 32, keepAliveTimeout: 30_000 });
const FORWARDED = ['api_key', 'authorization'] as const;

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    void (async () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const headers: Record<string, string> = { accept: 'application/json' };
      for (const name of FORWARDED) {
        const value = request.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const answer = await pool.request({ method: 'GET', path: String(request.headers['x-rest-path']), headers });
      const body = JSON.stringify({ data: await answer.body.json() });
      response.writeHead(answer.statusCode, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      response.end(body);
    })().catch(() => {
      response.writeHead(502).end();
    });
  });
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/graphql` })}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  void pool.close().then(() => process.exit(0));
});
