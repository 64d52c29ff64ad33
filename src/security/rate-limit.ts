/**
 * Rate limiting per client, with token buckets. A client is its credential when it sends one
 * (a hash of it: the secret itself is never kept) and its address otherwise; every request also
 * counts against its address, with a higher limit, because the gateway does not verify
 * credentials (the upstreams do) and a caller could otherwise invent a new one per request.
 *
 * The buckets live behind {@link RateLimitStore}: in this process, in a cluster's primary
 * (src/cluster/ipc.ts), or in Redis with REDIS_URL (src/redis/rate-limit-store.ts).
 */
import { IncomingMessage } from 'node:http';
import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { HeaderSource } from '../credentials.js';
import { credentialFingerprint } from '../secrets.js';
import { codedError } from '../errors.js';
import { createMemoryRateLimitStore, type RateLimitStore, type Take } from './rate-limit-store.js';

export { createMemoryRateLimitStore, type RateLimitStore } from './rate-limit-store.js';

/** Rate limits; 0 turns one off. */
export type RateLimits = {
  /** requests per minute of one client (its credential, or its address without one); 0: no limit. @default 0 */
  perMinute: number;
  /** requests per minute from one address, whatever credentials they carry; 0: no limit. @default 0 */
  perAddressPerMinute: number;
  /** proxies in front of the gateway whose X-Forwarded-For entries are trusted. @default 0 */
  trustProxyHops: number;
  /** where the buckets live. @default an in-memory store */
  store?: RateLimitStore;
  /** the clock, in milliseconds. @default Date.now */
  now?: () => number;
};

/**
 * The caller's address: the connection's peer, or with `hops` trusted proxies in front, the
 * X-Forwarded-For entry that the outermost trusted proxy added (entries further left are the
 * client's to invent).
 */
export function clientAddress(peer: string, forwardedFor: string | null, hops: number): string {
  if (hops === 0) return peer;
  const chain = (forwardedFor ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  chain.push(peer);
  return chain[Math.max(0, chain.length - 1 - hops)] ?? peer;
}

/** A client's key: its credential's fingerprint, or its address when it sends none. */
function clientKey(credential: string | undefined, address: string): string {
  return credential ? `client:${credential}` : `client:${address}`;
}

/**
 * The client a request comes from, as the rate limits key it: its credential (a hash of it), or
 * its address (`peer`, or with `hops` trusted proxies the X-Forwarded-For entry they added).
 */
export function clientOf(peer: string, headers: HeaderSource, hops: number): string {
  return clientKey(credentialFingerprint(headers), clientAddress(peer, headers.get('x-forwarded-for'), hops));
}

/** The peer address of the node:http connection a yoga request came on (`unknown` elsewhere). */
export function peerOf(serverContext: object): string {
  const incoming: unknown = Reflect.get(serverContext, 'req');
  return incoming instanceof IncomingMessage ? (incoming.socket.remoteAddress ?? 'unknown') : 'unknown';
}

/**
 * A request the limits refuse: 429 `RATE_LIMITED` when its bucket is empty, 503
 * `RATE_LIMIT_UNAVAILABLE` when a shared store cannot be asked and RATE_LIMIT_FAIL_CLOSED is set;
 * either way with when to come back.
 */
export type RateLimitRefusal = {
  status: 429 | 503;
  code: 'RATE_LIMITED' | 'RATE_LIMIT_UNAVAILABLE';
  message: string;
  retryAfterSeconds: number;
};

function refusal(perMinute: number, take: Take): RateLimitRefusal {
  const retryAfterSeconds = Math.max(1, Math.ceil(take.retryAfterMs / 1000));
  return take.unavailable
    ? {
        status: 503,
        code: 'RATE_LIMIT_UNAVAILABLE',
        message: `Rate limits cannot be checked just now; retry in ${retryAfterSeconds} s`,
        retryAfterSeconds,
      }
    : {
        status: 429,
        code: 'RATE_LIMITED',
        message: `Too many requests: at most ${perMinute} per minute; retry in ${retryAfterSeconds} s`,
        retryAfterSeconds,
      };
}

/**
 * The limits of one gateway, as the one check every way in makes before it reads a request: yoga's
 * plugin, the HTTP front (src/http/) and the WebSocket (src/live/websocket.ts).
 */
export type RateLimiter = {
  /**
   * takes a token from the buckets of the caller (its credential in `headers`, and its address: the
   * connection's `peer`, or the X-Forwarded-For entry of the outermost trusted proxy); the refusal
   * when one is empty
   */
  check(peer: string, headers: HeaderSource): Promise<RateLimitRefusal | undefined>;
};

/**
 * The key, in the server context yoga is given, of a request whose caller the HTTP front has
 * already checked: the plugin does not count it twice.
 */
export const RATE_LIMIT_CHECKED = 'rateLimitChecked';

/** The limiter, or undefined when both limits are 0 (off): then nothing is computed per request. */
export function createRateLimiter(limits: RateLimits): RateLimiter | undefined {
  if (limits.perMinute <= 0 && limits.perAddressPerMinute <= 0) return undefined;
  const store = limits.store ?? createMemoryRateLimitStore();
  const now = limits.now ?? Date.now;
  return {
    async check(peer, headers) {
      const address = clientAddress(peer, headers.get('x-forwarded-for'), limits.trustProxyHops);
      const credential = credentialFingerprint(headers);
      const checks: [key: string, perMinute: number][] = [];
      if (limits.perMinute > 0) checks.push([clientKey(credential, address), limits.perMinute]);
      if (limits.perAddressPerMinute > 0 && credential) checks.push([`address:${address}`, limits.perAddressPerMinute]);
      const at = now();
      if (store.remote) {
        // Each take is a round trip: both at once.
        const takes = await Promise.all(
          checks.map(([key, perMinute]) => Promise.resolve(store.take(key, { perMinute }, at))),
        );
        const refused = takes.findIndex((take) => !take.allowed);
        const [, perMinute = 0] = checks[refused] ?? [];
        return refused < 0 ? undefined : refusal(perMinute, takes[refused] as Take);
      }
      for (const [key, perMinute] of checks) {
        const take = await store.take(key, { perMinute }, at);
        if (!take.allowed) return refusal(perMinute, take);
      }
      return undefined;
    },
  };
}

/** The error a refused request is answered with, on either HTTP path: its code, status and Retry-After. */
export function refusalError(refusal: RateLimitRefusal): GraphQLError {
  return codedError(refusal.code, refusal.message, {
    status: refusal.status,
    headers: { 'Retry-After': String(refusal.retryAfterSeconds) },
  });
}

/**
 * The yoga plugin: each GraphQL request takes a token from its client's bucket and from its
 * address's; without one it is refused with 429, RATE_LIMITED and a Retry-After in seconds.
 * It runs before the body is read, so a refused request costs almost nothing. Requests the
 * gateway's own HTTP front has already checked ({@link RATE_LIMIT_CHECKED}) are not
 * counted twice.
 */
export function useRateLimit(limits: RateLimits, limiter = createRateLimiter(limits)): Plugin {
  if (limiter === undefined) return {};
  return {
    async onRequestParse({ request, serverContext }) {
      if (Reflect.get(serverContext, RATE_LIMIT_CHECKED) === true) return;
      const refusal = await limiter.check(peerOf(serverContext), request.headers);
      if (refusal) throw refusalError(refusal);
    },
  };
}
