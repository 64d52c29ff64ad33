/**
 * The live queries' poller (src/live/poller.ts) against a scripted upstream, on a fake clock:
 * one poll per watched read and interval, with the read's own credential; conditional when the
 * upstream gave validators; a difference invalidates; nothing polled once nothing is watched;
 * at most LIVE_POLL_MAX_PER_SECOND per area.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { answerState, LivePoller, type PollOutcome, type WatchedRead } from '../src/live/poller.js';
import { fakeClock, until } from './helpers/clock.js';
import { json, useScriptedUpstream, type Answer } from './helpers/scripted-upstream.js';

const upstream = useScriptedUpstream();
const INTERVAL_MS = 5000;
const PET = { id: 1, name: 'Cat 1', status: 'available' };

let poller: LivePoller | undefined;
afterEach(async () => {
  await poller?.close();
  poller = undefined;
});

/** A poller of the scripted upstream; what it invalidated and how each poll ended. */
function startPoller(maxPerSecond = 20, held?: () => boolean) {
  const changed: (readonly string[])[] = [];
  const outcomes: PollOutcome[] = [];
  poller = new LivePoller({
    intervalMs: INTERVAL_MS,
    maxPerSecond,
    baseUrls: { petstore: `${upstream().url}/api/v3`, plants: upstream().url },
    timeoutMs: 5000,
    onChanged: (identifiers) => changed.push(identifiers),
    onPoll: (_service, outcome) => outcomes.push(outcome),
    ...(held ? { held } : {}),
  });
  return { poller, changed, outcomes };
}

/** A read of pet `id` as a live query made it, with `apiKey` and the answer it got. */
function petRead(id: number, apiKey = 'key-a', body: unknown = { ...PET, id }): WatchedRead {
  return {
    service: 'petstore',
    operation: 'getPetById',
    path: `/pet/${id}`,
    query: '',
    headers: { accept: 'application/json', api_key: apiKey },
    state: answerState({ body }),
    identifiers: [`Pet:${id}`],
  };
}

/** Moves the clock one interval and waits for `polls` more polls to end. */
async function oneRound(outcomes: PollOutcome[], polls: number): Promise<void> {
  const before = outcomes.length;
  await vi.advanceTimersByTimeAsync(INTERVAL_MS);
  await until(() => outcomes.length >= before + polls, `${polls} poll(s)`);
}

describe('the poller', () => {
  it('polls a watched read each interval with its credential, conditionally once the upstream gave an ETag', async () => {
    fakeClock();
    const answers: Answer[] = [
      { ...json(200, PET), headers: { 'content-type': 'application/json', etag: '"v1"' } },
      { status: 304, headers: { etag: '"v1"' } },
      { ...json(200, { ...PET, name: 'Behind' }), headers: { 'content-type': 'application/json', etag: '"v2"' } },
    ];
    upstream().answer(() => answers.shift() ?? json(500, {}));
    const { poller, changed, outcomes } = startPoller();
    poller.watch(1, [petRead(1)]);

    await oneRound(outcomes, 1);
    await oneRound(outcomes, 1);
    await oneRound(outcomes, 1);

    expect(outcomes).toEqual(['unchanged', 'not_modified', 'changed']);
    expect(changed).toEqual([['Pet:1']]);
    expect(
      upstream().requests.map((request) => ({
        method: request.method,
        url: request.url,
        apiKey: request.headers['api_key'],
        authorization: request.headers['authorization'],
        ifNoneMatch: request.headers['if-none-match'],
      })),
    ).toEqual([
      { method: 'GET', url: '/api/v3/pet/1', apiKey: 'key-a', authorization: undefined, ifNoneMatch: undefined },
      { method: 'GET', url: '/api/v3/pet/1', apiKey: 'key-a', authorization: undefined, ifNoneMatch: '"v1"' },
      { method: 'GET', url: '/api/v3/pet/1', apiKey: 'key-a', authorization: undefined, ifNoneMatch: '"v1"' },
    ]);
  });

  it('compares the answer with what the live query read when the upstream sends no validators', async () => {
    fakeClock();
    upstream().answer(json(200, { ...PET, name: 'Changed before the first poll' }));
    const { poller, changed, outcomes } = startPoller();
    poller.watch(1, [petRead(1)]);

    await oneRound(outcomes, 1);
    await oneRound(outcomes, 1);

    expect(outcomes).toEqual(['changed', 'unchanged']);
    expect(changed).toEqual([['Pet:1']]);
    expect(upstream().requests[0]?.headers['if-none-match']).toBeUndefined();
  });

  it('sends one poll per read however many live queries watch it, and one per credential', async () => {
    fakeClock();
    upstream().answer(json(200, PET));
    const { poller, outcomes } = startPoller();
    poller.watch(1, [petRead(1, 'key-a')]);
    poller.watch(2, [petRead(1, 'key-a')]);
    poller.watch(3, [petRead(1, 'key-b')]);

    await oneRound(outcomes, 2);

    expect(poller.watched).toBe(2);
    expect(
      upstream()
        .requests.map((request) => request.headers['api_key'])
        .sort(),
    ).toEqual(['key-a', 'key-b']);
  });

  it('polls nothing more once the last live query watching a read has ended', async () => {
    fakeClock();
    upstream().answer(json(200, PET));
    const { poller, outcomes } = startPoller();
    poller.watch(1, [petRead(1)]);
    poller.watch(2, [petRead(1)]);
    await oneRound(outcomes, 1);

    poller.unwatch(1);
    await oneRound(outcomes, 1);
    poller.unwatch(2);
    await vi.advanceTimersByTimeAsync(INTERVAL_MS * 3);

    expect(poller.watched).toBe(0);
    expect(poller.scheduled).toBe(false);
    expect(upstream().requests).toHaveLength(2);
  });

  it('sends at most LIVE_POLL_MAX_PER_SECOND polls per area, the reads polled longest ago first', async () => {
    fakeClock();
    upstream().answer(json(200, PET));
    // 0.2 per second over 5 s: one poll a round.
    const { poller, outcomes } = startPoller(0.2);
    poller.watch(1, [petRead(1), petRead(2), petRead(3)]);

    await oneRound(outcomes, 3);
    await oneRound(outcomes, 3);
    await oneRound(outcomes, 3);

    expect(outcomes.filter((outcome) => outcome === 'deferred')).toHaveLength(6);
    expect(
      upstream()
        .requests.map((request) => request.url)
        .sort(),
    ).toEqual(['/api/v3/pet/1', '/api/v3/pet/2', '/api/v3/pet/3']);
  });
});
