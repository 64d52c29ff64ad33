/**
 * deploy/nginx.conf run for real: Debian's nginx with the shipped file (only its upstream
 * servers, listen port, log and temporary paths rewritten: test/helpers/nginx.ts) in front of two
 * gateways with the settings deploy/docker-compose.yml gives its replicas (TRUST_PROXY_HOPS=1),
 * sharing one redis-server and one embedded emulator. Through the proxy: the README's first
 * query answers with both credentials (nginx passes `api_key` on), the caller's X-Request-Id
 * reaches the gateway and comes back (nginx's own id when there is none), an upload streams
 * through, a rate limit counts each caller's address, when a replica stops mid-load nginx
 * moves on to the other, and only what apps and people use is routed: /metrics, /readiness and
 * /health are answered 404 by nginx itself, whatever the path's spelling.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../src/config/index.js';
import { startEmulator, type Emulator } from '../src/emulator/server.js';
import { createGateway } from '../src/gateway.js';
import { serve } from '../src/server.js';
import { openWs } from './helpers/live.js';
import { CLOSING, multipartOpening, openMultipart, uploadParts } from './helpers/multipart.js';
import { nginxBinary, startNginx, type Nginx } from './helpers/nginx.js';
import { PROJECT_ROOT } from './helpers/process.js';
import { useRedis } from './helpers/redis.js';
import { freePort } from './helpers/redis-server.js';
import {
  ALL_CREDENTIALS,
  API_KEY,
  BEARER,
  captureLog,
  expectedGet,
  expectedUpload,
  summary,
  type CapturedLog,
} from './helpers/stack.js';
import { until } from './helpers/clock.js';

const NGINX = nginxBinary();
const read = (file: string) => readFileSync(`${PROJECT_ROOT}${file}`, 'utf8');
const NGINX_CONF = read('deploy/nginx.conf');

/** The settings deploy/docker-compose.yml gives its gateway replicas. */
const COMPOSE_SETTINGS =
  (parse(read('deploy/docker-compose.yml')) as { services: Record<string, { environment?: Record<string, string> }> })
    .services['gateway-1']?.environment ?? {};

/** The README's first query (the curl of its Quick start) and the answer the README shows for it. */
function readmeFirstQuery(): { query: string; answer: unknown } {
  const readme = read('README.md');
  const [, body] = /-d '(\{"query":[^']*\})'/.exec(readme) ?? [];
  const [, answer] = /```json\n(\{"data":[^\n]*\})\n```/.exec(readme) ?? [];
  if (body === undefined || answer === undefined) throw new Error('README.md has no curl query with a JSON answer');
  return { query: (JSON.parse(body) as { query: string }).query, answer: JSON.parse(answer) };
}

/** Requests a minute one caller address may make in these tests (RATE_LIMIT_ADDRESS_PER_MINUTE). */
const ADDRESS_LIMIT = 12;

/** nginx's own request id ($request_id): 32 hex digits. */
const NGINX_REQUEST_ID = /^[0-9a-f]{32}$/;

/** One line of the access log deploy/nginx.conf writes (its `gateway` format). */
type AccessLine = { requestId: string; client: string; method: string; status: number; upstream: string };

type Replica = {
  /** 127.0.0.1:<port>, as nginx names it in its upstream list and access log */
  address: string;
  log: CapturedLog;
  /** stops as on SIGTERM (main.ts): refuses new connections, finishes those in flight; once */
  stop(): Promise<void>;
};

type Deployment = {
  replicas: [Replica, Replica];
  nginx: Nginx;
  /** nginx's access log so far, parsed */
  accessLines(): AccessLine[];
  /** the access log line of the request with this id, once nginx has written it */
  accessLine(requestId: string): Promise<AccessLine>;
  /** the gateway's log line of the request with this id, from whichever replica served it */
  requestLine(requestId: string): Promise<Record<string, unknown>>;
  close(): Promise<void>;
};

/** A replica as main.ts runs one process: the gateway on HOST:PORT, served until stopped. */
async function startReplica(env: Record<string, string>): Promise<Replica> {
  const config = loadConfig([], env);
  const log = captureLog();
  const gateway = createGateway(
    { ...config, petstoreUrl: config.petstoreUrl ?? '', plantsUrl: config.plantsUrl ?? '' },
    { logDestination: log },
  );
  // As main.ts: Redis has answered before the replica takes a request, so rate limits count from the first.
  const redis = await gateway.redis?.settled(5000);
  if (redis !== 'ready') {
    await gateway.close();
    throw new Error(`a replica found Redis ${redis ?? 'not configured'}`);
  }
  const serving = await serve(gateway, config, () => undefined);
  let stopped: Promise<void> | undefined;
  return {
    address: `127.0.0.1:${serving.port}`,
    log,
    stop: () => (stopped ??= serving.stop('SIGTERM').then(() => undefined)),
  };
}

/** Two replicas with these settings and nginx in front of them, with deploy/nginx.conf. */
async function startDeployment(env: Record<string, string>): Promise<Deployment> {
  // Whatever did start is stopped when the rest cannot be.
  const first = await startReplica(env);
  const second = await startReplica(env).catch(async (error: unknown) => {
    await first.stop();
    throw error;
  });
  const replicas: [Replica, Replica] = [first, second];
  const nginx = await startNginx(NGINX ?? 'nginx', NGINX_CONF, {
    upstreams: replicas.map((replica) => replica.address),
    port: await freePort(),
  }).catch(async (error: unknown) => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    throw error;
  });
  const accessLines = () => nginx.accessLog().map((line) => JSON.parse(line) as AccessLine);
  return {
    replicas,
    nginx,
    accessLines,
    accessLine: (requestId) =>
      until(() => accessLines().find((line) => line.requestId === requestId), `nginx to log ${requestId}`),
    requestLine: (requestId) =>
      until(
        () =>
          replicas
            .flatMap((replica) => replica.log.lines())
            .find((line) => line['requestId'] === requestId && typeof line['status'] === 'number'),
        `a gateway to log ${requestId}`,
      ),
    async close() {
      await nginx.stop();
      await Promise.all(replicas.map((replica) => replica.stop()));
    },
  };
}

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: unknown };

/** Sends a query to nginx by POST (JSON) or GET, from a loopback address of the test's choice. */
function send(
  nginx: Nginx,
  {
    method = 'POST',
    query,
    headers = {},
    from = '127.0.0.1',
  }: {
    method?: 'GET' | 'POST';
    query: string;
    headers?: Record<string, string>;
    from?: string;
  },
): Promise<Answer> {
  const path = method === 'GET' ? `/graphql?query=${encodeURIComponent(query)}` : '/graphql';
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${nginx.origin}${path}`,
      {
        method,
        // Each request on its own connection from `from`: nginx sees that address as the caller's.
        agent: false,
        localAddress: from,
        headers: {
          accept: 'application/graphql-response+json, application/json',
          // A GET is what a page of another site can make a browser send: CSRF prevention wants a header.
          ...(method === 'POST' ? { 'content-type': 'application/json' } : { 'x-graphql-csrf': '1' }),
          ...headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('error', reject);
        response.once('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const json = (response.headers['content-type'] ?? '').includes('json');
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: json ? JSON.parse(text) : text,
          });
        });
      },
    );
    request.once('error', reject);
    request.end(method === 'POST' ? JSON.stringify({ query }) : undefined);
  });
}

type PageAnswer = { status: number; contentType: string; body: string };

/**
 * GETs `path` exactly as written (no client-side normalization: `/graphql/../metrics` goes out as
 * it is), from 127.0.0.4 (an address of its own: the other tests' rate limits do not count it),
 * with this X-Request-Id, so that nginx's access log line of the request can be found.
 */
function getPath(origin: string, path: string, requestId: string, accept = 'application/json'): Promise<PageAnswer> {
  return new Promise((resolve, reject) => {
    const url = new URL(origin);
    const request = httpRequest(
      { host: url.hostname, port: url.port, path, agent: false, localAddress: '127.0.0.4' },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('error', reject);
        response.once('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            contentType: response.headers['content-type'] ?? '',
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    request.setHeader('accept', accept);
    request.setHeader('x-request-id', requestId);
    request.once('error', reject);
    request.end();
  });
}

/** The operations endpoints, and other spellings of them that nginx normalizes before it matches a path. */
const INSIDE_PATHS = [
  '/metrics',
  '/readiness',
  '/health',
  '/metrics/',
  '/metrics?format=text',
  '/%6Detrics',
  '/graphql/../metrics',
  '//metrics',
  '/readiness;/graphql',
];

const SKIPPED = NGINX === undefined ? ' (skipped: nginx is not installed; apt-get install nginx)' : '';
// A whole skipped file shows no test names in the default reporter: say why here.
if (NGINX === undefined) console.warn(`deploy/nginx.conf is not run${SKIPPED}`);

describe.skipIf(NGINX === undefined)(`deploy/nginx.conf run by nginx in front of two replicas${SKIPPED}`, () => {
  const redis = useRedis();
  let emulator: Emulator;
  let deployment: Deployment;
  const deployments: Deployment[] = [];
  /** The replicas' settings: compose's, with this test's upstreams, Redis and ports, as one process each. */
  const settings = (overrides: Record<string, string> = {}): Record<string, string> => ({
    ...COMPOSE_SETTINGS,
    // What the image sets (Dockerfile).
    NODE_ENV: 'production',
    // Every request's line, not one in a hundred of those that went well: the tests find the line of each request they send.
    REQUEST_LOG_SAMPLE: '1',
    // This test's upstreams and Redis, a free loopback port, one process per replica.
    PETSTORE_URL: emulator.petstoreUrl,
    PLANTS_URL: emulator.plantsUrl,
    REDIS_URL: redis.url,
    HOST: '127.0.0.1',
    PORT: '0',
    WORKERS: '1',
    ...overrides,
  });
  const upstream = () => {
    const requests = emulator.requests.map(summary).sort((a, b) => a.path.localeCompare(b.path));
    emulator.clearRequests();
    return requests;
  };

  beforeAll(async () => {
    emulator = await startEmulator();
    deployment = await startDeployment(
      settings({
        RATE_LIMIT_ADDRESS_PER_MINUTE: String(ADDRESS_LIMIT),
        // Every public path answers: GraphiQL at /graphql, the MCP endpoint and its metadata.
        GRAPHIQL: 'true',
        MCP: 'true',
        MCP_AUTHORIZATION_SERVERS: 'https://auth.example.com',
      }),
    );
    deployments.push(deployment);
  }, 30_000);
  afterEach(async () => {
    emulator.reset();
    emulator.clearRequests();
    // Rate-limit counters and cached answers start afresh for each test.
    await redis.cli('FLUSHALL');
  });
  afterAll(async () => {
    await Promise.all(deployments.map((each) => each.close()));
    await emulator?.close();
  });

  it("answers the README's first query with both credentials: nginx passes the api_key header on", async () => {
    const readme = readmeFirstQuery();

    const answer = await send(deployment.nginx, { query: readme.query, headers: ALL_CREDENTIALS });

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(readme.answer);
    const received = upstream();
    expect(received).toContainEqual(expectedGet('/api/v3/store/inventory', 'api_key'));
    expect(received.map((request) => request.apiKey)).toEqual(received.map(() => API_KEY));
  });

  it('passes a bearer token on to the pet store', async () => {
    const answer = await send(deployment.nginx, {
      query: '{ pet(id: 2) { id name } }',
      headers: { authorization: `Bearer ${BEARER}` },
    });

    expect(answer).toMatchObject({ status: 200, body: { data: { pet: { id: '2', name: 'Cat 2' } } } });
    expect(upstream()).toEqual([expectedGet('/api/v3/pet/2', 'bearer')]);
  });

  it("keeps the caller's X-Request-Id: in the answer, the gateway's log line, the upstream call and nginx's log", async () => {
    const answer = await send(deployment.nginx, {
      query: '{ pet(id: 3) { id } }',
      headers: { ...ALL_CREDENTIALS, 'x-request-id': 'checkout-7f3a' },
    });

    expect(answer.status).toBe(200);
    expect(answer.headers['x-request-id']).toBe('checkout-7f3a');
    expect(await deployment.requestLine('checkout-7f3a')).toMatchObject({ path: '/graphql', status: 200 });
    expect(emulator.requests.map((request) => request.headers['x-request-id'])).toEqual(['checkout-7f3a']);
    expect(await deployment.accessLine('checkout-7f3a')).toMatchObject({ status: 200, method: 'POST' });
  });

  it("gives a request without a usable X-Request-Id nginx's id, the same in both logs and the answer", async () => {
    const without = await send(deployment.nginx, { query: '{ pet(id: 4) { id } }', headers: ALL_CREDENTIALS });
    const malformed = await send(deployment.nginx, {
      query: '{ pet(id: 5) { id } }',
      headers: { ...ALL_CREDENTIALS, 'x-request-id': 'two words' },
    });

    for (const answer of [without, malformed]) {
      const id = String(answer.headers['x-request-id']);
      expect(id).toMatch(NGINX_REQUEST_ID);
      expect(await deployment.accessLine(id)).toMatchObject({ status: 200 });
      expect(await deployment.requestLine(id)).toMatchObject({ status: 200 });
    }
    expect(without.headers['x-request-id']).not.toBe(malformed.headers['x-request-id']);
  });

  it('streams an upload through: the pet store has the start of the file while the caller still sends the rest', async () => {
    const file = Buffer.from(Array.from({ length: 1024 * 1024 }, (_, index) => index % 256));
    const parts = uploadParts(
      {
        query: `mutation ($file: File!) { uploadPetImage(petId: 1, file: $file, additionalMetadata: "front") { code message } }`,
        variables: {},
      },
      { filename: 'photo.png', contentType: 'image/png' },
    );
    const upload = openMultipart(`${deployment.nginx.origin}/graphql`, { headers: ALL_CREDENTIALS });

    await upload.write(multipartOpening(parts));
    await upload.write(file.subarray(0, 512 * 1024));
    const midway = await until(() => {
      const request = emulator.requests.find((candidate) => candidate.bytesReceived >= 256 * 1024);
      return request && { complete: request.complete };
    }, 'the pet store to receive 256 KiB');
    await upload.end(Buffer.concat([file.subarray(512 * 1024), CLOSING]));
    const answer = await upload.response;

    expect(midway).toEqual({ complete: false });
    expect(answer).toEqual({
      status: 200,
      data: {
        uploadPetImage: { code: 200, message: `additionalMetadata: front\nFile uploaded, ${file.length} bytes` },
      },
    });
    const [received] = emulator.requests;
    expect(received && { ...summary(received), file: received.rawBody.equals(file) }).toEqual({
      ...expectedUpload('1', 'front'),
      file: true,
    });
  });

  it("counts a rate limit per caller address (nginx's X-Forwarded-For), across both replicas", async () => {
    const query = '{ pet(id: 1) { id } }';
    const statuses: number[] = [];
    for (let n = 0; n < ADDRESS_LIMIT; n++)
      statuses.push((await send(deployment.nginx, { query, headers: ALL_CREDENTIALS, from: '127.0.0.2' })).status);

    const refused = await send(deployment.nginx, { query, headers: ALL_CREDENTIALS, from: '127.0.0.2' });
    // nginx replaces what the caller says in X-Forwarded-For with the address it sees.
    const forged = await send(deployment.nginx, {
      query,
      headers: { ...ALL_CREDENTIALS, 'x-forwarded-for': '203.0.113.7' },
      from: '127.0.0.2',
    });
    const otherCaller = await send(deployment.nginx, { query, headers: ALL_CREDENTIALS, from: '127.0.0.3' });

    expect(statuses).toEqual(Array.from({ length: ADDRESS_LIMIT }, () => 200));
    expect(refused).toMatchObject({ status: 429, body: { errors: [{ extensions: { code: 'RATE_LIMITED' } }] } });
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(forged.status).toBe(429);
    expect(otherCaller.status).toBe(200);
    // Both replicas counted: round robin gave each of them some of the caller's requests.
    const served = await until(() => {
      const lines = deployment.accessLines().filter((line) => line.client === '127.0.0.2' && line.status === 200);
      return lines.length === ADDRESS_LIMIT ? new Set(lines.map((line) => line.upstream)) : undefined;
    }, "nginx to log the caller's requests");
    expect(served).toEqual(new Set(deployment.replicas.map((replica) => replica.address)));
  });

  it('routes what apps and people use to a replica: the entry page, GraphiQL, /graphql, /mcp and its metadata', async () => {
    const origin = deployment.nginx.origin;

    const entry = await getPath(origin, '/', 'public-entry');
    const graphiql = await getPath(origin, '/graphql', 'public-graphiql', 'text/html');
    const query = await getPath(origin, `/graphql?query=${encodeURIComponent('{ __typename }')}`, 'public-query');
    const mcp = await getPath(origin, '/mcp', 'public-mcp');
    const metadata = await getPath(origin, '/.well-known/oauth-protected-resource/mcp', 'public-metadata');

    expect(entry).toMatchObject({ status: 200, contentType: expect.stringContaining('application/json') });
    expect(JSON.parse(entry.body)).toMatchObject({ graphql: '/graphql' });
    expect(graphiql).toMatchObject({ status: 200, contentType: expect.stringContaining('text/html') });
    expect(graphiql.body).toContain('<title>Pet store GraphQL gateway</title>');
    // A GET without the CSRF header: the gateway's refusal, so the request reached it.
    expect(query.status).toBe(403);
    // The stateless MCP endpoint opens no stream: 405, POST only.
    expect(mcp.status).toBe(405);
    expect(JSON.parse(metadata.body)).toMatchObject({ authorization_servers: ['https://auth.example.com'] });
    for (const id of ['public-entry', 'public-graphiql', 'public-query', 'public-mcp', 'public-metadata'])
      expect((await deployment.accessLine(id)).upstream).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('passes the WebSocket of /graphql through: a live query answers, with the credential of connection_init', async () => {
    // With the response cache on, as the compose file has it.
    const websocket = await startDeployment(settings({ LIVE_QUERIES: 'true' }));
    deployments.push(websocket);
    const live = openWs(`${websocket.nginx.origin}/graphql`, 'query @live { pet(id: "3") { id name } }', {
      api_key: API_KEY,
    });

    try {
      expect(await live.results.next()).toEqual({ data: { pet: { id: '3', name: 'Cat 3' } }, isLive: true });
      expect(upstream()).toEqual([expectedGet('/api/v3/pet/3', 'api_key')]);
    } finally {
      await live.close();
    }
  });

  it.each(INSIDE_PATHS.map((path, index) => ({ path, id: `inside-${index}` })))(
    'keeps $path inside: nginx answers 404 itself, asking no replica',
    async ({ path, id }) => {
      const answer = await getPath(deployment.nginx.origin, path, id);

      expect(answer.status).toBe(404);
      expect(answer.body).not.toMatch(/# HELP|"status"|upstreams/);
      expect(await deployment.accessLine(id)).toMatchObject({ status: 404, upstream: '' });
    },
  );

  it("serves /metrics and /readiness on each replica's own address, where Prometheus and the probes ask", async () => {
    const [replica] = deployment.replicas;

    const metrics = await getPath(`http://${replica.address}`, '/metrics', 'direct-metrics', 'text/plain');
    const readiness = await getPath(`http://${replica.address}`, '/readiness', 'direct-readiness');

    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain('# HELP');
    expect(readiness.status).toBe(200);
    expect(JSON.parse(readiness.body)).toMatchObject({ status: 'ready' });
  });

  it('moves on to the other replica when one stops mid-load, and no request fails', async () => {
    const load = await startDeployment(settings());
    deployments.push(load);
    const [stopping, staying] = load.replicas;

    const results = await loadWhileStopping(load.nginx, stopping);
    const lines = await until(() => {
      const byId = new Map(load.accessLines().map((line) => [line.requestId, line]));
      const found = results.flatMap((result) => byId.get(result.id) ?? []);
      return found.length === results.length ? found : undefined;
    }, 'nginx to log every request');
    const logged = (result: LoadResult) => lines[results.indexOf(result)];

    // No request fails: nginx retries a GET whatever became of it and sends nothing more to a replica that
    // refuses connections, and a POST nginx writes on a keep-alive connection of the stopping replica is
    // still answered there, with Connection: close (src/server.ts), so nginx never meets a reset it could
    // not retry (it cannot tell a query from a mutation: deploy/nginx.conf, proxy_next_upstream).
    expect(results.filter((result) => result.status !== 200)).toEqual([]);
    expect(
      new Set(results.filter((result) => result.status === 200).map((result) => JSON.stringify(result.body))),
    ).toEqual(new Set([JSON.stringify({ data: { pet: { id: '1', name: 'Cat 1' } } })]));
    // Both replicas served before the stop; after it nginx tried the stopped one and moved on to the other.
    const before = results.filter((result) => result.phase === 'before').map((result) => logged(result)?.upstream);
    expect(before).toEqual(expect.arrayContaining([stopping.address, staying.address]));
    expect(
      lines.some((line) => line.upstream === `${stopping.address}, ${staying.address}` && line.status === 200),
    ).toBe(true);
    const after = results.filter((result) => result.phase === 'stopped').map((result) => logged(result)?.upstream);
    expect(after.filter((upstream) => !upstream?.endsWith(staying.address))).toEqual([]);
  });
});

type LoadResult = {
  id: string;
  method: 'GET' | 'POST';
  phase: 'before' | 'stopping' | 'stopped';
  status: number;
  body: unknown;
};

/** Answers the load needs before the stop, and after it. */
const LOAD_BEFORE_STOP = 40;
const LOAD_AFTER_STOP = 60;

/**
 * Six callers send a query over and over, by turns by GET and by POST, each on a new connection to
 * nginx; after the first answers `replica` stops, and the callers go on until enough requests sent
 * after the stop have been answered. Every answer, with the phase its request was sent in.
 */
async function loadWhileStopping(nginx: Nginx, replica: Replica): Promise<LoadResult[]> {
  const results: LoadResult[] = [];
  let phase: LoadResult['phase'] = 'before';
  let answeredAfterStop = 0;
  let startStop = () => {};
  const enoughBefore = new Promise<void>((resolve) => (startStop = resolve));
  const caller = async (caller: number) => {
    for (let n = 0; answeredAfterStop < LOAD_AFTER_STOP; n++) {
      const sentIn = phase;
      const method = (caller + n) % 2 === 0 ? 'GET' : 'POST';
      const id = `load-${caller}-${n}`;
      const answer = await send(nginx, {
        method,
        query: '{ pet(id: 1) { id name } }',
        headers: { ...ALL_CREDENTIALS, 'x-request-id': id },
      });
      results.push({ id, method, phase: sentIn, status: answer.status, body: answer.body });
      if (results.length >= LOAD_BEFORE_STOP) startStop();
      if (sentIn === 'stopped') answeredAfterStop += 1;
    }
  };
  const callers = Promise.all(Array.from({ length: 6 }, (_, n) => caller(n)));
  await Promise.race([enoughBefore, callers]);
  phase = 'stopping';
  await replica.stop();
  phase = 'stopped';
  await callers;
  return results;
}
