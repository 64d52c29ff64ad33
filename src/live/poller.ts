/**
 * Finding the changes made behind the gateway's back (directly at the upstream, by another
 * client): each upstream read a live query made is polled every LIVE_POLL_INTERVAL_MS, and a
 * difference invalidates what the read maps to (identifiers.ts), so the live queries that hold
 * it run again.
 *
 * - Only what live queries watch is polled, once per interval however many live queries watch
 *   it (a read is keyed by area, path, query, Accept and credential fingerprint), and no longer
 *   once the last of them has ended.
 * - A poll carries the headers of the read it repeats: the credential of the live query's own
 *   caller, never another's (two callers reading the same pet are two polled reads).
 * - A poll is conditional (`If-None-Match`, `If-Modified-Since`) when the upstream's last answer
 *   to it had an ETag or Last-Modified; a 304 is no change. Without validators (the reference pet
 *   store sends none) the answer is compared with the last one known.
 * - At most LIVE_POLL_MAX_PER_SECOND polls per area: the reads polled longest ago go first, the
 *   rest wait for the next round.
 */
import { Agent, request } from 'undici';
import { credentialFingerprint } from '../secrets.js';
import { decodeByContentType } from '../upstream/codec.js';
import type { UpstreamService } from '../upstream/failure.js';

/** One upstream read a live query made, as it was sent and answered. */
export type WatchedRead = {
  service: UpstreamService;
  /** the REST operation (its operationId) */
  operation: string;
  /** path below the area's base URL, encoded */
  path: string;
  /** the query string, encoded, without `?` ('' for none) */
  query: string;
  /** the headers the read was sent with: Accept and the caller's credential */
  headers: Readonly<Record<string, string>>;
  /** what it answered: its state as {@link answerState} gives it */
  state: string;
  /** the identifiers a difference invalidates */
  identifiers: readonly string[];
};

/** How one poll ended, as /metrics counts it. */
export type PollOutcome = 'changed' | 'unchanged' | 'not_modified' | 'failed' | 'deferred' | 'held';

/** What the poller is built with. */
export type LivePollerOptions = {
  /** time between two rounds, in milliseconds (LIVE_POLL_INTERVAL_MS) */
  intervalMs: number;
  /** most polls per second, per area (LIVE_POLL_MAX_PER_SECOND) */
  maxPerSecond: number;
  /** each area's base URL */
  baseUrls: Readonly<Partial<Record<UpstreamService, string>>>;
  /** longest wait for one poll's answer, in milliseconds */
  timeoutMs: number;
  /** told the identifiers of a read whose answer changed */
  onChanged(identifiers: readonly string[]): void;
  /** told how each poll ended (metrics) */
  onPoll?(service: UpstreamService, outcome: PollOutcome): void;
  /**
   * Whether an area is held back now (its circuit open, a Retry-After not passed): its reads are
   * not polled this round, as the area's own calls would not be sent. @default never
   */
  held?(service: UpstreamService): boolean;
};

/**
 * A decoded answer (or a failure's status) as one string to compare: JSON with object keys as
 * the upstream wrote them. Large integers decode to bigint; they are written as digits.
 */
export function answerState(outcome: { body: unknown } | { status: number }): string {
  if ('status' in outcome) return `status ${outcome.status}`;
  return `ok ${JSON.stringify(outcome.body, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))}`;
}

/** A polled read: what the live queries watching it last saw, and the upstream's validators. */
type Polled = {
  read: WatchedRead;
  watchers: Set<number>;
  /** the round it was last polled in (0: never) */
  round: number;
  polling: boolean;
  etag?: string | undefined;
  lastModified?: string | undefined;
};

/** The key of a read: one poll per key and interval. */
function readKey(read: WatchedRead): string {
  const fingerprint = credentialFingerprint({ get: (name) => read.headers[name] ?? null }) ?? '-';
  return [read.service, fingerprint, read.headers['accept'] ?? '', read.path, read.query].join('\n');
}

/** Polls what live queries watch; see the module comment. */
export class LivePoller {
  readonly #polled = new Map<string, Polled>();
  readonly #byLive = new Map<number, Set<string>>();
  readonly #agent = new Agent({ connections: 4 });
  #timer: ReturnType<typeof setTimeout> | undefined;
  #round = 0;
  /** polls each area may still send (see {@link round}) */
  readonly #credit = new Map<UpstreamService, number>();
  #closed = false;

  constructor(private readonly options: LivePollerOptions) {}

  /** How many distinct reads are polled. */
  get watched(): number {
    return this.#polled.size;
  }

  /** Whether a round is due (false once nothing is watched). */
  get scheduled(): boolean {
    return this.#timer !== undefined;
  }

  /** Live query `live` now watches `reads` (what its last run read), instead of what it watched before. */
  watch(live: number, reads: readonly WatchedRead[]): void {
    if (this.#closed) return;
    const keys = new Set<string>();
    for (const read of reads) {
      const key = readKey(read);
      keys.add(key);
      const known = this.#polled.get(key);
      if (known === undefined) this.#polled.set(key, { read, watchers: new Set([live]), round: 0, polling: false });
      else {
        // A run is newer than the last poll: what it read is what its live query now shows.
        if (known.read.state !== read.state) Object.assign(known, { read, etag: undefined, lastModified: undefined });
        known.watchers.add(live);
      }
    }
    this.#release(live, keys);
    this.#byLive.set(live, keys);
    this.#schedule();
  }

  /** Live query `live` has ended: what only it watched is polled no more. */
  unwatch(live: number): void {
    this.#release(live, new Set());
    this.#byLive.delete(live);
    if (this.#polled.size === 0) this.#unschedule();
  }

  /** Stops polling; polls in flight are cut. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unschedule();
    this.#polled.clear();
    this.#byLive.clear();
    await this.#agent.destroy();
  }

  /**
   * One round: polls each watched read, within each area's rate. Each round adds the rate times
   * the interval to an area's credit (at most one round's worth, or one poll, is kept: no burst
   * after a quiet spell); each poll spends one. A rate below one poll a round polls every few rounds.
   */
  async round(): Promise<void> {
    this.#round += 1;
    const perRound = (this.options.maxPerSecond * this.options.intervalMs) / 1000;
    const due = [...this.#polled.values()].filter((polled) => !polled.polling).sort((a, b) => a.round - b.round);
    for (const service of new Set(due.map((polled) => polled.read.service)))
      this.#credit.set(service, Math.min(Math.max(1, perRound), (this.#credit.get(service) ?? 0) + perRound));
    const polls: Promise<void>[] = [];
    for (const polled of due) {
      const { service } = polled.read;
      if (this.options.held?.(service) === true) {
        this.options.onPoll?.(service, 'held');
        continue;
      }
      const credit = this.#credit.get(service) ?? 0;
      if (credit < 1) {
        this.options.onPoll?.(service, 'deferred');
        continue;
      }
      this.#credit.set(service, credit - 1);
      polls.push(this.#poll(polled));
    }
    await Promise.all(polls);
  }

  #release(live: number, kept: ReadonlySet<string>): void {
    for (const key of this.#byLive.get(live) ?? []) {
      if (kept.has(key)) continue;
      const polled = this.#polled.get(key);
      polled?.watchers.delete(live);
      if (polled?.watchers.size === 0) this.#polled.delete(key);
    }
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#polled.size === 0 || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.round().finally(() => this.#schedule());
    }, this.options.intervalMs);
    // A pending poll does not keep a process alive that has nothing else to do.
    this.#timer.unref?.();
  }

  #unschedule(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #poll(polled: Polled): Promise<void> {
    polled.polling = true;
    polled.round = this.#round;
    const { read } = polled;
    const outcome = await this.#send(polled).catch((): PollOutcome => 'failed');
    polled.polling = false;
    this.options.onPoll?.(read.service, outcome);
  }

  /** Sends one poll; a changed answer invalidates the read's identifiers. */
  async #send(polled: Polled): Promise<PollOutcome> {
    const { read } = polled;
    const conditional = {
      ...(polled.etag === undefined ? {} : { 'if-none-match': polled.etag }),
      ...(polled.lastModified === undefined ? {} : { 'if-modified-since': polled.lastModified }),
    };
    const baseUrl = this.options.baseUrls[read.service];
    // An area the deployment does not serve is never read, so never polled; should one be asked, nothing is sent.
    if (baseUrl === undefined) return 'failed';
    const url = `${baseUrl}${read.path}${read.query === '' ? '' : `?${read.query}`}`;
    const answer = await request(url, {
      method: 'GET',
      headers: { ...read.headers, ...conditional },
      dispatcher: this.#agent,
      headersTimeout: this.options.timeoutMs,
      bodyTimeout: this.options.timeoutMs,
    });
    const text = await answer.body.text();
    if (answer.statusCode === 304) return 'not_modified';
    // An upstream that is failing or holding calls back says nothing about the data.
    if (answer.statusCode >= 500 || answer.statusCode === 429) return 'failed';
    const header = (name: string) => {
      const value = answer.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const state =
      answer.statusCode >= 200 && answer.statusCode <= 299
        ? answerState({ body: decodeByContentType(text, header('content-type')) })
        : answerState({ status: answer.statusCode });
    // Still watched (a live query may have ended while the poll was out), and by the same read.
    if (this.#polled.get(readKey(read)) !== polled || polled.read !== read) return 'unchanged';
    polled.etag = header('etag');
    polled.lastModified = header('last-modified');
    if (state === read.state) return 'unchanged';
    polled.read = { ...read, state };
    this.options.onChanged(read.identifiers);
    return 'changed';
  }
}
