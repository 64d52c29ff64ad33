/**
 * The hooks of a file that serves several gateways (one or more a test, with settings of its own)
 * over upstreams started once for the file: the embedded emulator and a scripted upstream.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import type { GatewayConfig, GatewayDependencies } from '../../src/gateway.js';
import { scriptedUpstreams, startScriptedUpstream, type ScriptedUpstream } from './scripted-upstream.js';
import { serveObserved, type ObservedGateway } from './stack.js';

/**
 * {@link serveObserved} over a scripted upstream's origin (its pet store under `/api/v3`), or over
 * the pet store at `petstore` and the plants at `plants`, with retries off unless `overrides` turn
 * them on, so that a test sees exactly the one request a call makes.
 */
export function serveScripted(
  petstore: string,
  plants = petstore,
  overrides: Partial<GatewayConfig> = {},
): Promise<ObservedGateway> {
  return serveObserved(scriptedUpstreams(petstore, plants), { upstreamRetries: 0, ...overrides });
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
      return tests.serve(scriptedUpstreams(url), { upstreamRetries: 0, ...overrides });
    },
  };
  return tests;
}
