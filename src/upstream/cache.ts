/**
 * The upstream cache (UPSTREAM_CACHE): the pet store's GET answers kept per REST resource, as
 * HTTP says they may be (RFC 9111), so that a read the upstream allows to be reused costs no
 * call. The rules are http-cache-semantics', applied as a shared cache (the gateway serves many
 * callers): `Cache-Control` max-age, s-maxage, no-store, no-cache, private, must-revalidate;
 * `Expires`; `Vary`; `Age`; validators (`ETag`, `Last-Modified`), with which a stale answer is
 * revalidated by a conditional GET whose 304 refreshes it; `stale-while-revalidate` (the stale
 * answer at once, one refresh in the background) and `stale-if-error` (the stale answer when the
 * upstream fails, a 5xx or no answer, within the window it allowed).
 *
 * Credentials are never mixed. An answer is kept under its call's method, area, path and query,
 * and the caller's credential fingerprint (a hash, `credentialFingerprint` in src/secrets.ts),
 * unless the upstream marked it `public` (or the call carried no credential): a second caller
 * with another key looks under its own fingerprint, and finds only what was public. A shared
 * cache does not keep `private` answers nor, per RFC 9111 §3.5, answers to calls that carried
 * `Authorization` unless they are `public` or have `s-maxage`. There is no per-replica private
 * cache: per caller and per replica, it would be hit too rarely to pay for its memory.
 *
 * Per-operation defaults (UPSTREAM_CACHE=getPetById:30s) give answers that say nothing of their
 * freshness (no max-age, s-maxage or Expires: the reference pet store sends none) an `s-maxage`
 * of that many seconds, the operator's explicit heuristic; an answer with its own freshness, or
 * `no-store`/`private`, keeps its own. Credentialed answers kept that way are kept under the
 * caller's fingerprint, never shared.
 *
 * Invalidation: every entry is filed under the resources its call reads (its row of `operations.ts`),
 * whose generation numbers are part of its key (`cache-store.ts`); a write through the gateway
 * tells the change feed (`changes.ts`), which bumps them before the write's answer is sent.
 */
import { createHash } from 'node:crypto';
import CachePolicy from 'http-cache-semantics';
import { CREDENTIAL_HEADERS } from '../credentials.js';
import { credentialFingerprint } from '../secrets.js';
import { changedTags, resourceTags } from './operations.js';
import type { UpstreamCacheStore, StoredAnswer } from './cache-store.js';
import type { ChangeFeed } from './changes.js';
import { decodeByContentType } from './codec.js';
import { UpstreamError, type UpstreamService } from './failure.js';
import type { UpstreamRequest, UpstreamResponse } from './call.js';

/**
 * How long an answer with a validator (`ETag`, `Last-Modified`) is kept once stale, to be
 * revalidated by a conditional GET rather than fetched again; the store's bounds come first.
 */
const VALIDATOR_KEEP_MS = 3_600_000;

/** The cache's settings: UPSTREAM_CACHE, UPSTREAM_CACHE_MAX_ENTRIES and UPSTREAM_CACHE_MAX_BYTES. */
export type UpstreamCacheSettings = {
  /** seconds of freshness per operation, for answers that give none (UPSTREAM_CACHE) */
  defaults: Readonly<Record<string, number>>;
};

/** How a stale answer came to be served. */
export type StaleServed = 'stale-while-revalidate' | 'stale-if-error';

/** What the cache did for one call, as metrics count it. */
export type CacheResult = 'hit' | 'miss' | 'revalidated' | 'stale';

/** A call's answer, and what the cache had to do with it. */
export type CacheOutcome = {
  response: UpstreamResponse;
  /** undefined: the call is not one the cache looks at (not a GET, or it carries a body or secrets) */
  result?: CacheResult;
  /** the answer was the cache's, sent without a call of this caller's: fresh, or stale and why */
  served?: 'fresh' | StaleServed;
  /** its age, in seconds, when the cache served it */
  ageSeconds?: number;
};

/** An answer as the upstream client reads it for the cache: with its headers and its text. */
export type RawResponse = UpstreamResponse & {
  raw?: { headers: Readonly<Record<string, string | string[] | undefined>>; text: string };
};

/** Sends one call upstream (through the client's sharing, circuit and retries). */
export type Send = (call: UpstreamRequest) => Promise<RawResponse>;

/** Where a call's answer is looked for and kept. */
type Plan = {
  request: CachePolicy.Request;
  tags: string[];
  /** the key of the caller's own answers: with its credential fingerprint when it has one */
  own: string;
  /** the key of answers anyone may have */
  open: string;
  credentialed: boolean;
};

/** The upstream cache of one gateway, over one store, for every area. */
export class UpstreamCache {
  /** the keys being refreshed in the background (stale-while-revalidate): one refresh each at a time */
  readonly #refreshing = new Set<string>();
  readonly #stopListening: () => void;

  constructor(
    private readonly store: UpstreamCacheStore,
    private readonly settings: UpstreamCacheSettings,
    changes: ChangeFeed,
  ) {
    // Told synchronously, before the write's answer is sent: the memory store's bump is done on
    // return; Redis's INCR is sent before the shared feed's PUBLISH on the same connection, which
    // the feed waits for.
    this.#stopListening = changes.listen((list) => void this.store.bump(list.flatMap(changedTags)));
  }

  /** Stops hearing changes. */
  close(): void {
    this.#stopListening();
  }

  /** The answer to `call` (`target`: its path and query): the cache's, revalidated, or sent for and kept. */
  async fetch(service: UpstreamService, call: UpstreamRequest, target: string, send: Send): Promise<CacheOutcome> {
    const plan = planOf(service, call, target);
    if (plan === undefined) return { response: await send(call) };
    const numbers = await this.store.generations(plan.tags);
    // A store that cannot be read now (Redis away) is bypassed: the call is sent, nothing kept.
    if (numbers === undefined) return { response: await send(call), result: 'miss' };
    const generations = numbers.join('.');
    const keys = { own: `${plan.own}|${generations}`, open: `${plan.open}|${generations}` };
    const stored = await this.store.get(plan.credentialed ? [keys.own, keys.open] : [keys.open]);
    try {
      if (stored !== undefined) return await this.answer(plan, keys, call, send, stored);
    } catch (error) {
      // A kept answer that cannot be read (a damaged entry in a shared store) is a miss, not a failure.
      if (!(error instanceof UnreadableAnswer)) throw error;
    }
    return { response: await this.fill(plan, keys, call, send), result: 'miss' };
  }

  /** The answer to a call with a kept answer: fresh, stale while it is refreshed, or revalidated. */
  private answer(
    plan: Plan,
    keys: { own: string; open: string },
    call: UpstreamRequest,
    send: Send,
    stored: StoredAnswer,
  ): CacheOutcome | Promise<CacheOutcome> {
    let policy: CachePolicy;
    try {
      policy = CachePolicy.fromObject(stored.policy);
    } catch {
      throw new UnreadableAnswer();
    }
    const { revalidation } = policy.evaluateRequest(plan.request);
    if (revalidation === undefined) return served(stored, policy, 'fresh', 'hit');
    if (!revalidation.synchronous) {
      this.refresh(plan, keys, call, send, stored, policy);
      return served(stored, policy, 'stale-while-revalidate', 'stale');
    }
    return this.revalidate(plan, keys, call, send, stored, policy);
  }

  /**
   * A stale answer checked with the upstream: by a conditional GET when it has a validator (a 304
   * refreshes it), else fetched again; served stale if the upstream fails within its
   * stale-if-error window.
   */
  private async revalidate(
    plan: Plan,
    keys: { own: string; open: string },
    call: UpstreamRequest,
    send: Send,
    stored: StoredAnswer,
    policy: CachePolicy,
  ): Promise<CacheOutcome> {
    const conditional = conditionalHeaders(policy.revalidationHeaders(plan.request));
    let response: RawResponse;
    try {
      response = await send(conditional ? { ...call, headers: { ...call.headers, ...conditional } } : call);
    } catch (error) {
      if (staleIfError(policy, plan.request, error)) return served(stored, policy, 'stale-if-error', 'stale');
      throw error;
    }
    if (response.status === 304 && response.raw !== undefined) {
      const revalidated = policy.revalidatedPolicy(plan.request, { status: 304, headers: flat(response.raw.headers) });
      if (!revalidated.modified) {
        const refreshed = { policy: revalidated.policy.toObject(), text: stored.text };
        await this.keep(plan, keys, revalidated.policy, refreshed);
        return { ...served(refreshed, revalidated.policy, 'fresh', 'revalidated'), served: undefined };
      }
      // A 304 that matches nothing kept: the body is needed after all.
      return { response: await this.fill(plan, keys, call, send), result: 'miss' };
    }
    await this.store200(plan, keys, call.operation, response);
    return { response, result: 'miss' };
  }

  /** One background refresh of a stale-while-revalidate answer per key; its failure changes nothing. */
  private refresh(
    plan: Plan,
    keys: { own: string; open: string },
    call: UpstreamRequest,
    send: Send,
    stored: StoredAnswer,
    policy: CachePolicy,
  ): void {
    if (this.#refreshing.has(keys.own)) return;
    this.#refreshing.add(keys.own);
    // The refresh serves no request: it is not recorded as one of the caller's calls.
    const background: UpstreamRequest = { ...call, scope: undefined };
    void this.revalidate(plan, keys, background, send, stored, policy)
      .catch(() => undefined)
      .finally(() => this.#refreshing.delete(keys.own));
  }

  /** A miss: the call sent, and its answer kept when HTTP allows. */
  private async fill(plan: Plan, keys: { own: string; open: string }, call: UpstreamRequest, send: Send) {
    const response = await send(call);
    await this.store200(plan, keys, call.operation, response);
    return response;
  }

  /** Keeps a fresh answer when its headers (or the operation's default) allow. */
  private async store200(plan: Plan, keys: { own: string; open: string }, operation: string, response: RawResponse) {
    if (response.raw === undefined) return;
    const headers = flat(response.raw.headers);
    let policy = new CachePolicy(plan.request, { status: response.status, headers }, { shared: true });
    const defaultSeconds = Object.hasOwn(this.settings.defaults, operation)
      ? this.settings.defaults[operation]
      : undefined;
    if (defaultSeconds !== undefined && !saysFreshness(policy)) {
      // The operator's heuristic freshness, written as the upstream would have: s-maxage, which a
      // shared cache may apply to a call with Authorization (RFC 9111 §3.5).
      const cacheControl = [headers['cache-control'], `s-maxage=${defaultSeconds}`].filter(Boolean).join(', ');
      policy = new CachePolicy(
        plan.request,
        { status: response.status, headers: { ...headers, 'cache-control': cacheControl } },
        { shared: true },
      );
    }
    if (!policy.storable()) return;
    await this.keep(plan, keys, policy, { policy: policy.toObject(), text: response.raw.text });
  }

  /** Keeps an answer under the caller's key, or the open one when it is public or had no credential. */
  private async keep(plan: Plan, keys: { own: string; open: string }, policy: CachePolicy, answer: StoredAnswer) {
    const headers = policy.responseHeaders();
    const validated = headers.etag !== undefined || headers['last-modified'] !== undefined;
    const keepMs = Math.max(policy.timeToLive(), validated ? VALIDATOR_KEEP_MS : 0);
    if (keepMs <= 0) return;
    const open = !plan.credentialed || answer.policy.rescc.public !== undefined;
    await this.store.set(open ? keys.open : keys.own, answer, keepMs);
  }
}

/** Where a call's answer is looked for; undefined for calls the cache leaves alone. */
function planOf(service: UpstreamService, call: UpstreamRequest, target: string): Plan | undefined {
  // A body, or secrets besides the credential (a password in the query), is never kept.
  if (call.method !== 'GET' || call.body !== undefined || (call.secrets?.length ?? 0) > 0 || call.ignoreBody)
    return undefined;
  const clear: Record<string, string> = {};
  for (const [name, value] of Object.entries(call.headers ?? {})) clear[name.toLowerCase()] = value;
  const fingerprint = credentialFingerprint({ get: (name) => clear[name] ?? null });
  // The policy keeps the request's headers when the answer has Vary, and may be kept in Redis:
  // credentials are kept hashed, which matches a Vary on them as well as the clear value would.
  const headers = { ...clear };
  for (const name of Object.values(CREDENTIAL_HEADERS)) {
    const value = headers[name];
    if (value !== undefined) headers[name] = `sha256:${createHash('sha256').update(value).digest('base64url')}`;
  }
  const open = `${service} GET ${target}`;
  return {
    request: { url: target, method: 'GET', headers },
    tags: resourceTags(call.resources),
    own: fingerprint === undefined ? open : `${open} ${fingerprint}`,
    open,
    credentialed: fingerprint !== undefined,
  };
}

/** A kept answer whose policy or body cannot be read. */
class UnreadableAnswer extends Error {}

/** A kept answer served: its body decoded by its Content-Type, its age in whole seconds. */
function served(
  stored: StoredAnswer,
  policy: CachePolicy,
  how: 'fresh' | StaleServed,
  result: CacheResult,
): CacheOutcome {
  const contentType = policy.responseHeaders()['content-type'];
  let body: unknown;
  try {
    body = decodeByContentType(stored.text, typeof contentType === 'string' ? contentType : undefined);
  } catch {
    throw new UnreadableAnswer();
  }
  return { response: { status: stored.policy.st, body }, result, served: how, ageSeconds: Math.floor(policy.age()) };
}

/** Whether an answer says how long it is fresh (max-age, s-maxage, Expires), as the policy read it. */
function saysFreshness(policy: CachePolicy): boolean {
  const { rescc, resh } = policy.toObject();
  return rescc['max-age'] !== undefined || rescc['s-maxage'] !== undefined || resh.expires !== undefined;
}

/** The validators of a revalidation's headers (`If-None-Match`, `If-Modified-Since`); undefined without any. */
function conditionalHeaders(headers: CachePolicy.Headers): Record<string, string> | undefined {
  const conditional: Record<string, string> = {};
  for (const name of ['if-none-match', 'if-modified-since']) {
    const value = headers[name];
    if (typeof value === 'string') conditional[name] = value;
  }
  return Object.keys(conditional).length > 0 ? conditional : undefined;
}

/**
 * Whether a failure lets the kept answer be served under its `stale-if-error`: the upstream
 * did not answer, timed out, was held back, or answered 5xx; http-cache-semantics judges the window.
 */
function staleIfError(policy: CachePolicy, request: CachePolicy.Request, error: unknown): boolean {
  if (!(error instanceof UpstreamError)) return false;
  const failed =
    error.failure === 'unavailable' ||
    error.failure === 'timeout' ||
    error.failure === 'circuit-open' ||
    error.failure === 'rate-limited' ||
    (error.failure === 'status' && (error.status ?? 0) >= 500);
  // Given an error answer, the policy keeps itself exactly when stale-if-error still allows it.
  return failed && policy.revalidatedPolicy(request, { status: 503, headers: {} }).policy === policy;
}

/** Response headers as http-cache-semantics reads them: one string each. */
function flat(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) result[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}
