/**
 * Upstream back-pressure: what a `Retry-After` header (RFC 9110 §10.2.3) does to later calls.
 *
 * - A **429** with `Retry-After` holds back **the caller that received it**: its credential
 *   fingerprint (`credentialFingerprint`, the key the caches use; callers without a credential
 *   share one key), for that area. Until the time has passed, that caller's calls fail at once
 *   with `rate-limited`; every other caller keeps calling. APIs limit per key, so one tenant's
 *   limit is that tenant's alone.
 * - A **503** with `Retry-After` holds nobody: it says when that call may be retried (`http.ts`
 *   never retries it sooner, nor past its deadline), and sets the cool-down should the area's
 *   circuit open on its failure rate (`circuit.ts`).
 *
 * The wait is capped (UPSTREAM_RETRY_AFTER_MAX_MS): an upstream, or a proxy in front of it, that
 * sends a Retry-After of a day must not hold anyone back for a day.
 */
import { UpstreamError, type UpstreamService } from './failure.js';

/**
 * The wait a `Retry-After` value asks for, in milliseconds, at most `maxMs`: either form of
 * RFC 9110, delay-seconds (`120`) or an HTTP-date (`Wed, 21 Oct 2015 07:28:00 GMT`, read against
 * `nowMs`, the epoch milliseconds now). Undefined when the header is absent or unreadable; a date
 * already past gives 0.
 */
export function retryAfterMs(value: string | undefined, nowMs: number, maxMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(maxMs, Number(text) * 1000);
  // Only a date in letters: Date.parse would read bare numbers ("-1", "1.5") as years.
  if (!/^[A-Za-z]{3},/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.min(maxMs, Math.max(0, at - nowMs));
}

/** The key of callers who sent no credential: the upstream cannot tell them apart either. */
export const ANONYMOUS_CALLER = 'anonymous';

/**
 * Holds kept at most: past it, those that have run out are dropped, then the ones nearest their
 * end. Each needs the upstream to have answered that credential 429, so a caller cannot grow it
 * without the upstream's help; the bound keeps memory flat even then.
 */
const MAX_HOLDS = 10_000;

/**
 * One area's 429 holds, per caller. Times are epoch milliseconds (`Date.now()`), the clock an
 * HTTP-date is read against.
 */
export class RateLimitHolds {
  /** caller key → when its hold ends */
  private readonly until = new Map<string, number>();

  constructor(private readonly service: UpstreamService) {}

  /** True while no caller is held: a call then needs no key at all (its fingerprint is not computed). */
  get empty(): boolean {
    return this.until.size === 0;
  }

  /**
   * Holds `caller` back for `ms` from now; a hold already longer stays. True when this made it
   * longer (so the news is worth passing on to the other replicas).
   */
  hold(caller: string, ms: number): boolean {
    const now = Date.now();
    const until = now + ms;
    if (ms <= 0 || until <= (this.until.get(caller) ?? 0)) return false;
    if (this.until.size >= MAX_HOLDS) this.prune(now);
    // Re-inserted, so that the map's order stays close to the order holds end in.
    this.until.delete(caller);
    this.until.set(caller, until);
    return true;
  }

  /** Milliseconds until `caller` may call again; 0 when it is not held. */
  remainingMs(caller: string): number {
    const until = this.until.get(caller);
    if (until === undefined) return 0;
    const remaining = until - Date.now();
    if (remaining > 0) return remaining;
    this.until.delete(caller);
    return 0;
  }

  /** The error of a call `caller` makes while held, or undefined when it is not. */
  refusal(caller: string, operation: string): UpstreamError | undefined {
    const remainingMs = this.remainingMs(caller);
    if (remainingMs === 0) return undefined;
    const { service } = this;
    return new UpstreamError({
      service,
      operation,
      failure: 'rate-limited',
      message:
        `${service} limits these credentials' calls and asked for none for ` +
        `${Math.ceil(remainingMs / 1000)} s (429 with Retry-After)`,
      retryAfterMs: remainingMs,
    });
  }

  /** Drops the holds that have ended; if none had, the oldest tenth. */
  private prune(now: number): void {
    for (const [caller, until] of this.until) if (until <= now) this.until.delete(caller);
    if (this.until.size < MAX_HOLDS) return;
    let drop = Math.ceil(MAX_HOLDS / 10);
    for (const caller of this.until.keys()) {
      if (drop-- === 0) break;
      this.until.delete(caller);
    }
  }
}
