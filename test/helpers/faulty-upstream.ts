/**
 * A pet store that fails a seeded random share of its calls, and a load of many callers against
 * a gateway in front of it: the fault test of the suite (short) and of the bench (longer).
 *
 * The upstream answers `GET /api/v3/pet/{id}` with the pet, or with one of the faults an
 * unwell upstream gives: a 500 and a 503 whose messages tell of its internals, an HTML 502 from
 * a proxy, a stall past the gateway's deadline, a reset, a body cut short, a body that is not
 * JSON, a body of the wrong shape; or, shedding load, a 503 with `Retry-After`. Every text
 * of a fault holds {@link INTERNAL_MARK}, so that a test can tell when one reached an answer.
 */
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { checkErrorCodes } from './error-codes.js';
import { seeded } from './random.js';

/** What every fault's text carries: found in an answer, the gateway leaked the upstream's words. */
const INTERNAL_MARK = '/srv/app/';

/** The faults the upstream can give. */
export const FAULTS = [
  'status-500',
  'status-503',
  'html-502',
  'stall',
  'reset',
  'truncated',
  'garbage',
  'wrong-shape',
] as const;
export type Fault = (typeof FAULTS)[number] | 'shed-503';

export type FaultyUpstreamOptions = {
  /** share of calls (0–1) answered with one of `faults`, picked at random */
  faultRate: number;
  /** @default every fault of {@link FAULTS} */
  faults?: readonly Fault[];
  /** seed of the random choices, so that a run can be repeated */
  seed: number;
};

export type FaultyUpstream = {
  /** the pet store's base URL (`…/api/v3`) */
  petstoreUrl: string;
  /** the plant area's (it answers nothing but 404 there) */
  plantsUrl: string;
  /** calls received, and how many of them got each fault */
  counts: { calls: number; faults: Partial<Record<Fault, number>> };
  close(): Promise<void>;
};

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

/** Gives `fault` as the answer. */
function answerWith(fault: Fault, response: ServerResponse, socket: Socket): void {
  switch (fault) {
    case 'status-500':
      return json(response, 500, { code: 500, message: `boom at ${INTERNAL_MARK}server.js:12` });
    case 'status-503':
      return json(response, 503, { code: 503, message: `pool exhausted at ${INTERNAL_MARK}db.js:40` });
    case 'shed-503':
      return json(response, 503, { message: `shedding load at ${INTERNAL_MARK}limiter.js:7` }, { 'retry-after': '1' });
    case 'html-502':
      response.writeHead(502, { 'content-type': 'text/html' });
      return void response.end(`<html><body>502 Bad Gateway from ${INTERNAL_MARK}proxy</body></html>`);
    case 'stall':
      // Headers, then nothing until the gateway gives up (or the server closes).
      response.writeHead(200, { 'content-type': 'application/json' });
      return void response.write('{"id":');
    case 'reset':
      return void socket.resetAndDestroy();
    case 'truncated':
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '200' });
      response.write(`{"id":1,"name":"${INTERNAL_MARK}`);
      return void setImmediate(() => socket.destroy());
    case 'garbage':
      response.writeHead(200, { 'content-type': 'application/json' });
      return void response.end(`{not json at ${INTERNAL_MARK}serializer.js`);
    case 'wrong-shape':
      return json(response, 200, { id: `${INTERNAL_MARK}id`, name: 42, photoUrls: 'none' });
  }
}

/** Starts the faulty pet store on a free loopback port. */
export async function startFaultyUpstream(options: FaultyUpstreamOptions): Promise<FaultyUpstream> {
  // The same seed, the same faults in the same order.
  const next = seeded(options.seed);
  const faults = options.faults ?? FAULTS;
  const counts: FaultyUpstream['counts'] = { calls: 0, faults: {} };
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    const match = /^\/api\/v3\/pet\/(\d+)$/.exec(request.url ?? '');
    if (request.method !== 'GET' || !match) return json(response, 404, { code: 404, message: 'not here' });
    counts.calls += 1;
    if (next() < options.faultRate) {
      const fault = faults[Math.floor(next() * faults.length)] ?? 'status-500';
      counts.faults[fault] = (counts.faults[fault] ?? 0) + 1;
      return answerWith(fault, response, request.socket);
    }
    const id = Number(match[1]);
    json(response, 200, { id, name: `Cat ${id}`, photoUrls: [], tags: [], status: 'available' });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    petstoreUrl: `${origin}/api/v3`,
    plantsUrl: origin,
    counts,
    async close() {
      // Stalled answers never end by themselves.
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** What a load of many callers got. */
export type FaultLoadResult = {
  answers: number;
  /** answers with the pet and no error */
  clean: number;
  /** answers with an HTTP status of 500 or more */
  serverErrors: number;
  /** requests that got no HTTP answer at all (a connection dropped) */
  dropped: number;
  /** answers whose errors carry no code, or one outside `ErrorCode` */
  uncoded: number;
  /** answers that hold {@link INTERNAL_MARK} */
  leaked: number;
  /** how many errors carried each code */
  codes: Record<string, number>;
};

/** How long a load goes on, and how each request is watched. */
export type FaultLoadPlan = {
  /** asked before each query: false ends the caller's loop (`index` counts the queries sent so far) */
  more(index: number): boolean;
  /** wraps each request, as the bench times it; the suite's tests time nothing */
  watch?: <T>(request: () => Promise<T>) => Promise<T>;
};

/**
 * `clients` callers, each with a credential of its own, ask the gateway at `url` for pets (ids
 * varied, so that in-flight sharing answers few), one query after another, while `plan.more`
 * says so.
 */
export async function runFaultLoad(url: string, clients: number, plan: FaultLoadPlan): Promise<FaultLoadResult> {
  const result: FaultLoadResult = {
    answers: 0,
    clean: 0,
    serverErrors: 0,
    dropped: 0,
    uncoded: 0,
    leaked: 0,
    codes: {},
  };
  const watch = plan.watch ?? ((request) => request());
  let sent = 0;
  const client = async (n: number) => {
    const headers = {
      'content-type': 'application/json',
      authorization: `Bearer client-${n}-token`,
      api_key: `client-${n}-key`,
    };
    while (plan.more(sent)) {
      sent += 1;
      const body = JSON.stringify({ query: `{ pet(id: ${(sent % 97) + 1}) { id name } }` });
      const answer = await watch(async () => {
        const response = await fetch(url, { method: 'POST', headers, body });
        return { status: response.status, text: await response.text() };
      }).catch(() => undefined);
      if (answer === undefined) result.dropped += 1;
      else tally(result, answer.status, answer.text);
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, n) => client(n)));
  return result;
}

/** Counts one answer into `result`. */
function tally(result: FaultLoadResult, status: number, text: string): void {
  result.answers += 1;
  if (status >= 500) result.serverErrors += 1;
  if (text.includes(INTERNAL_MARK)) result.leaked += 1;
  let body: { data?: { pet?: unknown } | null; errors?: { extensions?: { code?: unknown } }[] };
  try {
    body = JSON.parse(text) as typeof body;
    checkErrorCodes(body);
  } catch {
    result.uncoded += 1;
    return;
  }
  for (const error of body.errors ?? []) {
    const code = String(error.extensions?.code);
    result.codes[code] = (result.codes[code] ?? 0) + 1;
  }
  if (body.errors === undefined && body.data?.pet) result.clean += 1;
}
