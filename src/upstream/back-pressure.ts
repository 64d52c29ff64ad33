/**
 * Upstream back-pressure: an area that answers 429 (too many requests) or 503 (unavailable) with
 * a `Retry-After` header has said when it wants to be called again, and until then it is not
 * called at all (RFC 9110 §10.2.3). Each area's client keeps one {@link RetryAfterGate}; a call
 * that finds it shut fails at once with `rate-limited` (after a 429) or `circuit-open` (after a
 * 503), carrying the time left, and `http.ts` never schedules a retry before the gate opens.
 *
 * The wait is capped (UPSTREAM_RETRY_AFTER_MAX_MS): an upstream, or a proxy in front of it, that
 * sends a Retry-After of a day must not stop an area for a day.
 */
import { UpstreamError, type UpstreamService } from './failure.js';

/** The statuses whose Retry-After holds an area back. */
export type HoldingStatus = 429 | 503;

/** True for a status whose Retry-After the gateway honours. */
export function isHoldingStatus(status: number): status is HoldingStatus {
  return status === 429 || status === 503;
}

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

/** Where a gate stands: shut (until when, and by which status) or open. */
export type GateState = { shut: false } | { shut: true; status: HoldingStatus; remainingMs: number };

/**
 * One area's gate: shut by a 429 or 503 with Retry-After (its own or one another replica
 * received, see `circuit.ts`'s sharing), open again once the time has passed. Times are epoch
 * milliseconds (`Date.now()`), the clock an HTTP-date is read against.
 */
export class RetryAfterGate {
  private until = 0;
  private status: HoldingStatus = 503;

  constructor(private readonly service: UpstreamService) {}

  /**
   * Shuts the gate for `ms` from now, for `status`; a gate already shut for longer stays so. True
   * when this made it shut for longer (so the news is worth passing on).
   */
  hold(status: HoldingStatus, ms: number): boolean {
    const until = Date.now() + ms;
    if (ms <= 0 || until <= this.until) return false;
    this.until = until;
    this.status = status;
    return true;
  }

  state(): GateState {
    const remainingMs = this.until - Date.now();
    return remainingMs > 0 ? { shut: true, status: this.status, remainingMs } : { shut: false };
  }

  /** The error of a call made while the gate is shut, or undefined when it is open. */
  refusal(operation: string): UpstreamError | undefined {
    const state = this.state();
    if (!state.shut) return undefined;
    const { service } = this;
    const seconds = Math.ceil(state.remainingMs / 1000);
    return new UpstreamError({
      service,
      operation,
      failure: state.status === 429 ? 'rate-limited' : 'circuit-open',
      message:
        state.status === 429
          ? `${service} limits the gateway's calls and asked for none for ${seconds} s (429 with Retry-After)`
          : `${service} is unavailable and asked for no calls for ${seconds} s (503 with Retry-After)`,
      retryAfterMs: state.remainingMs,
    });
  }
}
