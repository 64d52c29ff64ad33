/**
 * A gateway whose operations side a test can read: its log lines (captured instead of written
 * to stdout) and, when asked, its spans (an in-memory exporter), served over HTTP in front of
 * the embedded emulator or any upstream URLs.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { createGateway, type GatewayConfig, type GatewayDependencies } from '../../src/gateway.js';
import type { DestinationStream } from '../../src/observability/logger.js';
import { startScriptedUpstream, type ScriptedUpstream } from './scripted-upstream.js';
import { listen, postGraphQL, stop, testConfig, type GraphQLResponse } from './stack.js';

/** A captured log: every line as written, and parsed. */
export type CapturedLog = DestinationStream & {
  /** everything written, as one string (what stdout would have shown) */
  text(): string;
  /** each line parsed as JSON */
  lines(): Record<string, unknown>[];
};

/** A log destination that keeps what is written. */
export function captureLog(): CapturedLog {
  let written = '';
  return {
    write: (chunk: string) => {
      written += chunk;
    },
    text: () => written,
    lines: () =>
      written
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

export type ObservedGateway = {
  /** the gateway's origin, e.g. http://127.0.0.1:41234 */
  origin: string;
  /** its GraphQL endpoint */
  url: string;
  log: CapturedLog;
  gql(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<GraphQLResponse>;
  /** the request log lines (the ones with a `status`) so far */
  requestLines(): Record<string, unknown>[];
  close(): Promise<void>;
};

/**
 * Serves a gateway over `upstreams` (the emulator's URLs, or any), with its log captured (and, given a
 * `spanExporter`, its spans).
 */
export async function serveObserved(
  upstreams: Pick<Emulator, 'petstoreUrl' | 'plantsUrl'>,
  overrides: Partial<GatewayConfig> = {},
  dependencies: Omit<GatewayDependencies, 'logDestination'> = {},
): Promise<ObservedGateway> {
  const log = captureLog();
  const gateway = createGateway(
    testConfig({ petstoreUrl: upstreams.petstoreUrl, plantsUrl: upstreams.plantsUrl, logLevel: 'info', ...overrides }),
    {
      ...dependencies,
      logDestination: log,
    },
  );
  const { server, url: origin } = await listen(gateway.handler);
  const url = `${origin}/graphql`;
  return {
    origin,
    url,
    log,
    gql: (query, variables, headers) => postGraphQL(url, query, variables, headers),
    requestLines: () => log.lines().filter((line) => typeof line['status'] === 'number'),
    async close() {
      await stop(server);
      await gateway.close();
    },
  };
}

/** What a file of operations tests shares: its upstreams, and the gateway of the current test. */
export type ObservedTests = {
  /** the embedded emulator, started once for the file; its request log emptied after each test */
  readonly emulator: Emulator;
  /** a scripted upstream, started once for the file; its script and log reset after each test */
  readonly scripted: ScriptedUpstream;
  /** the gateway the current test served last */
  readonly gateway: ObservedGateway;
  /** {@link serveObserved} (over the emulator unless told), closed when the test ends; a test may serve several */
  serve(
    upstreams?: Pick<Emulator, 'petstoreUrl' | 'plantsUrl'>,
    overrides?: Partial<GatewayConfig>,
    dependencies?: Omit<GatewayDependencies, 'logDestination'>,
  ): Promise<ObservedGateway>;
  /**
   * {@link serve} over the scripted upstream (its pet store under `/api/v3`, its plants at its root),
   * with retries off unless `overrides` turn them on, so that a test sees exactly the one request a
   * call makes.
   */
  serveScripted(overrides?: Partial<GatewayConfig>): Promise<ObservedGateway>;
};

/**
 * The hooks of a file of operations tests (logs, metrics, health, tracing): the upstreams
 * started before its tests and stopped after them, and each test's gateway closed after it.
 */
export function useObserved(): ObservedTests {
  let emulator: Emulator | undefined;
  let scripted: ScriptedUpstream | undefined;
  let gateway: ObservedGateway | undefined;
  const served: ObservedGateway[] = [];
  const present = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`useObserved: there is no ${name} outside a test`);
    return value;
  };
  beforeAll(async () => {
    [emulator, scripted] = await Promise.all([startEmulator(), startScriptedUpstream()]);
  });
  afterEach(async () => {
    await Promise.all(served.splice(0).map((each) => each.close()));
    gateway = undefined;
    emulator?.clearRequests();
    scripted?.reset();
  });
  afterAll(() => Promise.all([emulator?.close(), scripted?.close()]));
  const tests: ObservedTests = {
    get emulator() {
      return present(emulator, 'emulator');
    },
    get scripted() {
      return present(scripted, 'scripted upstream');
    },
    get gateway() {
      return present(gateway, 'gateway');
    },
    async serve(upstreams, overrides, dependencies) {
      gateway = await serveObserved(upstreams ?? present(emulator, 'emulator'), overrides, dependencies);
      served.push(gateway);
      return gateway;
    },
    serveScripted(overrides = {}) {
      const { url } = present(scripted, 'scripted upstream');
      return tests.serve({ petstoreUrl: `${url}/api/v3`, plantsUrl: url }, { upstreamRetries: 0, ...overrides });
    },
  };
  return tests;
}
