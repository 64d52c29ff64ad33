/**
 * Live queries (LIVE_QUERIES, src/live/): `query @live` over server-sent events and graphql-ws
 * is answered again when a write through another replica changes what it shows, and when a
 * change made behind the gateway's back is found by polling; limits, and a stop.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../src/emulator/server.js';
import { until } from './helpers/clock.js';
import { connectReplicas, openSse, openWs, serveLiveGateway, type LiveGateway } from './helpers/live.js';
import { ALL_CREDENTIALS, API_KEY, BEARER, postGraphQL } from './helpers/stack.js';
import { startUpstream } from './helpers/upstream.js';

const LIVE_PET = 'query @live { pet(id: "1") { id name status } }';
const UPDATE_PET = 'mutation ($input: PetInput!) { updatePet(id: "1", input: $input) { id name } }';

let emulator: Emulator;
const started: LiveGateway[] = [];
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  emulator = await startUpstream();
});
afterAll(async () => {
  await emulator.close();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await Promise.all(started.splice(0).map((gateway) => gateway.stop()));
  emulator.reset();
  emulator.clearRequests();
});

async function gateway(overrides: Parameters<typeof serveLiveGateway>[1] = {}): Promise<LiveGateway> {
  const served = await serveLiveGateway(emulator, { livePollIntervalMs: 600_000, ...overrides });
  started.push(served);
  return served;
}

describe('a write through another replica', () => {
  it('reaches a live query over server-sent events at once', async () => {
    const [a, b] = [await gateway(), await gateway()];
    cleanups.push(connectReplicas(b.gateway, a.gateway));
    const live = openSse(a.url, LIVE_PET, ALL_CREDENTIALS);
    cleanups.push(() => live.close());

    expect(await live.results.next()).toEqual({ data: { pet: { id: '1', name: 'Cat 1', status: 'AVAILABLE' } }, isLive: true });
    const written = await postGraphQL(b.url, UPDATE_PET, { input: { name: 'Kitty', status: 'SOLD' } }, ALL_CREDENTIALS);
    expect(written.data).toEqual({ updatePet: { id: '1', name: 'Kitty' } });

    // "Within 1 s": the wait for the event is bounded by it (no poll could answer: the interval is 10 minutes).
    expect(await live.results.next(1000)).toEqual({ data: { pet: { id: '1', name: 'Kitty', status: 'SOLD' } }, isLive: true });
  });
});
