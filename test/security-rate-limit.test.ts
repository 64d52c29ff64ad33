/**
 * Rate limiting (RATE_LIMIT_PER_MINUTE, RATE_LIMIT_ADDRESS_PER_MINUTE, TRUST_PROXY_HOPS): token
 * buckets per client, the in-memory store, the client's address behind proxies, and the 429
 * with RATE_LIMITED and Retry-After a caller sees.
 */
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it, vi } from 'vitest';
import {
  clientAddress,
  createMemoryRateLimitStore,
  useRateLimit,
  type RateLimitStore,
} from '../src/security/rate-limit.js';
import { ALL_CREDENTIALS, API_KEY, BEARER, GRAPHQL_POST_HEADERS, startStack, type Stack } from './helpers/stack.js';

describe('the in-memory store', () => {
  const perMinute = 60;

  it('gives a new client a full bucket, then refuses with the wait until the next token', () => {
    const store = createMemoryRateLimitStore();
    const takes = Array.from({ length: 61 }, () => store.take('a', { perMinute }, 0));

    expect(takes.slice(0, 60).every((take) => 'allowed' in take && take.allowed)).toBe(true);
    // 60 per minute: one token per second.
    expect(takes[60]).toEqual({ allowed: false, retryAfterMs: 1000 });
  });

  it('refills evenly over the minute', () => {
    const store = createMemoryRateLimitStore();
    for (let index = 0; index < 60; index += 1) store.take('a', { perMinute }, 0);

    expect(store.take('a', { perMinute }, 500)).toEqual({ allowed: false, retryAfterMs: 500 });
    expect(store.take('a', { perMinute }, 1000)).toEqual({ allowed: true, retryAfterMs: 0 });
    expect(store.take('a', { perMinute }, 1000)).toEqual({ allowed: false, retryAfterMs: 1000 });
  });

  it('keeps one bucket per key', () => {
    const store = createMemoryRateLimitStore();
    store.take('a', { perMinute: 1 }, 0);

    expect(store.take('a', { perMinute: 1 }, 0)).toMatchObject({ allowed: false });
    expect(store.take('b', { perMinute: 1 }, 0)).toMatchObject({ allowed: true });
  });

  it('holds at most maxKeys buckets, dropping refilled ones first, then the oldest', () => {
    const store = createMemoryRateLimitStore({ maxKeys: 2 });
    store.take('a', { perMinute: 1 }, 0);
    store.take('b', { perMinute: 1 }, 0);
    // A third client: "a" and "b" are both still empty, so the oldest ("a") is dropped.
    store.take('c', { perMinute: 1 }, 0);

    expect(store.take('b', { perMinute: 1 }, 0)).toMatchObject({ allowed: false });
    expect(store.take('a', { perMinute: 1 }, 0)).toMatchObject({ allowed: true });
  });
});

describe('clientAddress', () => {
  const peer = '10.0.0.9';

  it('ignores X-Forwarded-For unless proxies are trusted: a client can write anything there', () => {
    expect(clientAddress(peer, '203.0.113.7', 0)).toBe(peer);
  });

  it('with one trusted proxy, takes the entry that proxy added (the last), not what the client wrote before it', () => {
    expect(clientAddress(peer, '198.51.100.1, 203.0.113.7', 1)).toBe('203.0.113.7');
  });

  it('with two, the one before it', () => {
    expect(clientAddress(peer, '198.51.100.1, 203.0.113.7, 10.0.0.2', 2)).toBe('203.0.113.7');
  });
});

/** Posts `{ __typename }` `times` times with these headers and returns the statuses. */
async function statuses(stack: Stack, times: number, headers: Record<string, string>): Promise<number[]> {
  const result: number[] = [];
  for (let index = 0; index < times; index += 1) result.push((await stack.gql('{ __typename }', {}, headers)).status);
  return result;
}

describe('through the gateway', () => {
  it('refuses the 4th request of a minute with 429, RATE_LIMITED and Retry-After, before it runs', async () => {
    const stack = await startStack({ rateLimitPerMinute: 3 });
    try {
      await statuses(stack, 3, ALL_CREDENTIALS);
      const response = await fetch(stack.url, {
        method: 'POST',
        headers: {
          ...GRAPHQL_POST_HEADERS,
          ...ALL_CREDENTIALS,
        },
        body: JSON.stringify({ query: '{ pet(id: 1) { id } }' }),
      });

      expect(response.status).toBe(429);
      // 3 per minute: a token every 20 s.
      expect(response.headers.get('retry-after')).toBe('20');
      expect(await response.json()).toEqual({
        errors: [
          { message: 'Too many requests: at most 3 per minute; retry in 20 s', extensions: { code: 'RATE_LIMITED' } },
        ],
      });
      expect(stack.upstream()).toEqual([]);
    } finally {
      await stack.close();
    }
  });

  it('counts each credential apart, and callers without one by their address', async () => {
    const stack = await startStack({ rateLimitPerMinute: 2 });
    try {
      expect(await statuses(stack, 3, { api_key: 'caller-one-key' })).toEqual([200, 200, 429]);
      expect(await statuses(stack, 3, { authorization: 'Bearer caller-two-token' })).toEqual([200, 200, 429]);
      expect(await statuses(stack, 3, {})).toEqual([200, 200, 429]);
    } finally {
      await stack.close();
    }
  });

  it('caps an address that invents a new credential per request (RATE_LIMIT_ADDRESS_PER_MINUTE)', async () => {
    const stack = await startStack({ rateLimitPerMinute: 100, rateLimitAddressPerMinute: 5 });
    try {
      const result: number[] = [];
      for (let index = 0; index < 7; index += 1)
        result.push((await stack.gql('{ __typename }', {}, { api_key: `invented-${index}` })).status);

      expect(result).toEqual([200, 200, 200, 200, 200, 429, 429]);
    } finally {
      await stack.close();
    }
  });

  it('is off with 0', async () => {
    const stack = await startStack({ rateLimitPerMinute: 0, rateLimitAddressPerMinute: 0 });
    try {
      expect(new Set(await statuses(stack, 30, ALL_CREDENTIALS))).toEqual(new Set([200]));
    } finally {
      await stack.close();
    }
  });

  it('is off by default: behind a load balancer every caller would share one address', async () => {
    const stack = await startStack();
    try {
      expect(new Set(await statuses(stack, 30, {}))).toEqual(new Set([200]));
    } finally {
      await stack.close();
    }
  });

  it('allows 600 a minute per client with RATE_LIMIT_PER_MINUTE=600', async () => {
    // The limiter's clock (Date.now) is the test's: no token comes back while the 700 requests are answered.
    vi.useFakeTimers({ toFake: ['Date'] });
    const stack = await startStack({ rateLimitPerMinute: 600 });
    try {
      const result = await Promise.all(
        Array.from({ length: 700 }, () =>
          stack.gql('{ __typename }', {}, ALL_CREDENTIALS).then((answer) => answer.status),
        ),
      );

      expect(result.filter((status) => status === 200)).toHaveLength(600);
      expect(result.filter((status) => status === 429)).toHaveLength(100);
      // The bucket refills at 10 a second: a tenth of a second later, one more is answered.
      vi.advanceTimersByTime(100);
      expect(await statuses(stack, 2, ALL_CREDENTIALS)).toEqual([200, 429]);
    } finally {
      vi.useRealTimers();
      await stack.close();
    }
  });
});

describe('a shared store', () => {
  it('is asked through the same interface, and never sees a credential, only its hash', async () => {
    const keys: string[] = [];
    const store: RateLimitStore = {
      take: (key) => {
        keys.push(key);
        return Promise.resolve({ allowed: true, retryAfterMs: 0 });
      },
    };
    const yoga = createYoga({
      schema: createSchema({ typeDefs: 'type Query { ok: Boolean }' }),
      plugins: [useRateLimit({ perMinute: 10, perAddressPerMinute: 100, trustProxyHops: 0, store })],
      logging: false,
    });

    const response = await yoga.fetch('http://gateway/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...ALL_CREDENTIALS },
      body: JSON.stringify({ query: '{ ok }' }),
    });

    expect(response.status).toBe(200);
    expect(keys).toEqual([expect.stringMatching(/^client:[\w-]{43}$/), 'address:unknown']);
    for (const secret of [BEARER, API_KEY]) expect(keys.join(' ')).not.toContain(secret);
  });
});
