/**
 * What the cluster primary and its workers say to each other over the IPC channel node:cluster
 * opens, and the worker's side of it. The primary (`primary.ts`) resolves the upstreams once
 * (starting the embedded emulator when it is used) and holds what must be exact across
 * workers: the rate-limit buckets, and the sum of the workers' metrics.
 */
import type { MetricsJson } from '../observability/metrics.js';
import type { BucketRule, RateLimitStore, Take } from '../security/rate-limit-store.js';
import { ShortLivedTable } from '../short-lived-table.js';

/** Primary → worker: build the gateway on these upstreams and listen. */
export type StartMessage = {
  type: 'gateway:start';
  /** unset: the area is not served */
  petstoreUrl?: string;
  plantsUrl?: string;
  emulator: boolean;
};
/** Worker → primary: listening for the start message (a message sent before a listener exists is lost). */
export type ReadyMessage = { type: 'gateway:ready' };
/** Worker → primary: listening on this port. */
export type ListeningMessage = { type: 'gateway:listening'; port: number };
/** Primary → worker: stop gracefully (`cut`: at once). */
export type StopMessage = { type: 'gateway:stop'; cut: boolean };
/** Worker → primary: take a token from a bucket. */
export type TakeMessage = { type: 'gateway:take'; id: number; key: string; perMinute: number; now: number };
/** Primary → worker: the outcome of a take. */
type TakenMessage = { type: 'gateway:taken'; id: number; take: Take };
/** Worker → primary: the metrics of every worker, summed. */
export type MetricsMessage = { type: 'gateway:metrics'; id: number };
/** Primary → worker: the summed metrics, in the text exposition format (or why not). */
type MetricsAnswer = { type: 'gateway:metrics-answer'; id: number; text?: string; error?: string };
/** Primary → worker: this worker's own metrics, for a sum. */
type CollectMessage = { type: 'gateway:collect'; id: number };
/** Worker → primary: its own metrics, as prom-client's JSON (or why not). */
export type CollectedMessage = { type: 'gateway:collected'; id: number; metrics?: MetricsJson[]; error?: string };

export type ToWorker = StartMessage | StopMessage | TakenMessage | MetricsAnswer | CollectMessage;
export type ToPrimary = ReadyMessage | ListeningMessage | TakeMessage | MetricsMessage | CollectedMessage;

function isMessage<T extends { type: string }>(value: unknown, type: T['type']): value is T {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === type;
}

/** Sends a message to the primary; false when the channel is gone (the primary died). */
export function toPrimary(message: ToPrimary): boolean {
  if (!process.send || !process.connected) return false;
  process.send(message);
  return true;
}

/** Asks the primary for the upstreams, and waits for its start message. */
export function startMessage(): Promise<StartMessage> {
  return new Promise((resolve) => {
    const listener = (message: unknown) => {
      if (!isMessage<StartMessage>(message, 'gateway:start')) return;
      process.off('message', listener);
      resolve(message);
    };
    process.on('message', listener);
    toPrimary({ type: 'gateway:ready' });
  });
}

/** Calls `handler` for each stop message. */
export function onStopMessage(handler: (cut: boolean) => void): void {
  process.on('message', (message: unknown) => {
    if (isMessage<StopMessage>(message, 'gateway:stop')) handler(message.cut);
  });
}

/** Answers the primary's requests for this worker's own metrics with `collect()`. */
export function onCollectMessage(collect: () => Promise<MetricsJson[]>): void {
  process.on('message', (message: unknown) => {
    if (!isMessage<CollectMessage>(message, 'gateway:collect')) return;
    const { id } = message;
    collect().then(
      (metrics) => toPrimary({ type: 'gateway:collected', id, metrics }),
      (error: unknown) =>
        toPrimary({ type: 'gateway:collected', id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
}

let nextId = 0;
/** Replies awaited, by request id: one per rate-limit check (see ShortLivedTable). */
const pending = new ShortLivedTable<(message: TakenMessage | MetricsAnswer) => void>();
let listening = false;

/** Sends a request to the primary and waits for its answer, at most `timeoutMs`. */
function ask<A extends TakenMessage | MetricsAnswer>(
  request: (id: number) => TakeMessage | MetricsMessage,
  timeoutMs: number,
): Promise<A> {
  if (!listening) {
    listening = true;
    process.on('message', (message: unknown) => {
      if (
        !isMessage<TakenMessage>(message, 'gateway:taken') &&
        !isMessage<MetricsAnswer>(message, 'gateway:metrics-answer')
      )
        return;
      const key = String(message.id);
      pending.get(key)?.(message);
      pending.delete(key);
    });
  }
  const id = (nextId = (nextId + 1) % Number.MAX_SAFE_INTEGER);
  const key = String(id);
  return new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(key);
      reject(new Error(`the cluster primary did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    pending.set(key, (answer) => {
      clearTimeout(timer);
      resolve(answer as A);
    });
    if (!toPrimary(request(id))) {
      clearTimeout(timer);
      pending.delete(key);
      reject(new Error('the cluster primary is gone'));
    }
  });
}

/**
 * The rate-limit store of a worker: the primary holds the buckets, so a limit is exact
 * whichever worker a request lands on. When the primary does not answer within `timeoutMs`
 * the request is let through (a limit is not worth an outage). `onChange` hears when that
 * starts (with why) and when the primary answers again (undefined): once per spell, not once
 * per request.
 */
export function primaryRateLimitStore(
  timeoutMs: number,
  onChange: (failure: Error | undefined) => void,
): RateLimitStore {
  let failing = false;
  return {
    async take(key: string, rule: BucketRule, now: number): Promise<Take> {
      try {
        const answer = await ask<TakenMessage>(
          (id) => ({ type: 'gateway:take', id, key, perMinute: rule.perMinute, now }),
          timeoutMs,
        );
        if (failing) onChange(undefined);
        failing = false;
        return answer.take;
      } catch (error) {
        if (!failing) onChange(error instanceof Error ? error : new Error(String(error)));
        failing = true;
        return { allowed: true, retryAfterMs: 0 };
      }
    },
  };
}

/** The metrics of every worker, summed by the primary (prom-client's cluster aggregation), as text. */
export async function clusterMetrics(timeoutMs: number): Promise<string> {
  const answer = await ask<MetricsAnswer>((id) => ({ type: 'gateway:metrics', id }), timeoutMs);
  if (answer.text === undefined) throw new Error(answer.error ?? 'no metrics');
  return answer.text;
}

export { isMessage };
