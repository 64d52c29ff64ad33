/**
 * The cluster primary (WORKERS > 1): forks the workers, which each build a gateway and listen
 * on the shared port; restarts a worker that dies, with back-off; holds the rate-limit buckets
 * and sums the workers' metrics for /metrics; and on SIGTERM/SIGINT has every worker drain as a
 * single process would, then exits: 0 when every worker stopped cleanly, 1 when one did not, or
 * when the stop had not ended by its deadline (the workers still running are then killed). It
 * serves no request itself.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from '../observability/logger.js';
import type { MetricsJson } from '../observability/metrics.js';
import { createMemoryRateLimitStore } from '../security/rate-limit-store.js';
import {
  isMessage,
  type CollectedMessage,
  type ListeningMessage,
  type MetricsMessage,
  type ReadyMessage,
  type StartMessage,
  type StopMessage,
  type TakeMessage,
  type ToWorker,
} from './ipc.js';

/** The first wait before a dead worker is replaced; it doubles with each death in a row. */
const RESTART_DELAY_MS = 100;
/** The longest wait before a dead worker is replaced. */
const RESTART_DELAY_MAX_MS = 10_000;
/** A worker that lived this long resets the back-off: its death was not part of a crash loop. */
const STABLE_AFTER_MS = 10_000;
/**
 * How long the sum for /metrics waits for one worker's metrics. One that does not answer in time
 * (stuck, or dying) is left out of that scrape rather than failing it.
 */
const COLLECT_TIMEOUT_MS = 2000;

/** What the primary is started with. */
export type PrimaryOptions = {
  workers: number;
  /** the resolved upstreams, handed to every worker */
  upstreams: Omit<StartMessage, 'type'>;
  shutdownGraceMs: number;
  /**
   * how long after the first stop signal the primary kills the workers still running and exits 1:
   * after the workers' own deadline, so that each has ended itself if it could
   */
  stopDeadlineMs: number;
  log: Logger;
  /** ends the process with this code, once its log is written */
  exit(code: number): void;
  /** called once, when every worker listens (the start-up banner) */
  onListening(port: number): void;
  /** called once every worker has stopped, before the process exits (the emulator closes) */
  onStopped(): Promise<void>;
};

/** Runs the primary until it is stopped by a signal. */
export function runPrimary(options: PrimaryOptions): void {
  new Primary(options).start();
}

/**
 * The primary's state: the workers it started (and which of them serve), their restarts with
 * back-off, the stop and its deadline, and the metrics collections under way.
 */
class Primary {
  private readonly log: Logger;
  private readonly buckets = createMemoryRateLimitStore();
  private readonly started = new Map<Worker, number>();
  // The workers that listen: a worker still starting has no metrics yet, and would not answer.
  private readonly serving = new Set<Worker>();
  private readonly collecting = new Map<number, (worker: Worker, message: CollectedMessage) => void>();
  private collections = 0;
  private deathsInARow = 0;
  private listening = 0;
  private stopping = false;
  /** workers that did not stop cleanly (their exit code was not 0) */
  private failedStops = 0;

  constructor(private readonly options: PrimaryOptions) {
    this.log = options.log;
  }

  /** Listens to the workers and the stop signals, and forks the workers. */
  start(): void {
    cluster.on('message', (worker, message: unknown) => this.onMessage(worker, message));
    cluster.on('exit', (worker, code, signal) => this.onExit(worker, code, signal));
    process.on('SIGTERM', () => this.stop('SIGTERM'));
    process.on('SIGINT', () => this.stop('SIGINT'));

    for (let index = 0; index < this.options.workers; index += 1) this.fork();
  }

  private send(worker: Worker, message: ToWorker): void {
    if (worker.isConnected()) worker.send(message);
  }

  private fork(): void {
    this.started.set(cluster.fork(), Date.now());
  }

  private onMessage(worker: Worker, message: unknown): void {
    if (isMessage<ReadyMessage>(message, 'gateway:ready')) {
      this.send(worker, { type: 'gateway:start', ...this.options.upstreams });
    } else if (isMessage<TakeMessage>(message, 'gateway:take')) {
      void Promise.resolve(this.buckets.take(message.key, { perMinute: message.perMinute }, message.now)).then((take) =>
        this.send(worker, { type: 'gateway:taken', id: message.id, take }),
      );
    } else if (isMessage<MetricsMessage>(message, 'gateway:metrics')) {
      this.sumMetrics().then(
        (text) => this.send(worker, { type: 'gateway:metrics-answer', id: message.id, text }),
        (error: unknown) =>
          this.send(worker, {
            type: 'gateway:metrics-answer',
            id: message.id,
            error: error instanceof Error ? error.message : 'failed',
          }),
      );
    } else if (isMessage<CollectedMessage>(message, 'gateway:collected')) {
      this.collecting.get(message.id)?.(worker, message);
    } else if (isMessage<ListeningMessage>(message, 'gateway:listening')) {
      this.serving.add(worker);
      // Ready once every worker is: before that, all connections would land on the first ones.
      this.listening += 1;
      if (this.listening === this.options.workers) this.options.onListening(message.port);
      if (this.listening > this.options.workers)
        this.log.info({ worker: worker.process.pid }, `worker ${worker.process.pid ?? '?'} is serving`);
    }
  }

  /** Every serving worker's metrics, summed by prom-client's cluster aggregation. */
  private async sumMetrics(): Promise<string> {
    const id = (this.collections += 1);
    const asked = [...this.serving].filter((worker) => worker.isConnected());
    const answered = new Set<Worker>();
    const metrics: MetricsJson[] = [];
    await new Promise<void>((resolve) => {
      if (asked.length === 0) return resolve();
      const timer = setTimeout(() => {
        this.collecting.delete(id);
        const missing = asked.filter((worker) => !answered.has(worker)).map((worker) => worker.process.pid ?? '?');
        this.log.warn(
          { workers: missing },
          `/metrics without worker(s) ${missing.join(', ')}: no answer within ${COLLECT_TIMEOUT_MS} ms`,
        );
        resolve();
      }, COLLECT_TIMEOUT_MS);
      this.collecting.set(id, (worker, message) => {
        answered.add(worker);
        if (message.metrics) metrics.push(...message.metrics);
        else
          this.log.warn(
            { worker: worker.process.pid },
            `/metrics without worker ${worker.process.pid ?? '?'}: ${message.error ?? 'no metrics'}`,
          );
        if (answered.size < asked.length) return;
        clearTimeout(timer);
        this.collecting.delete(id);
        resolve();
      });
      for (const worker of asked) this.send(worker, { type: 'gateway:collect', id });
    });
    return AggregatorRegistry.aggregate(metrics).metrics();
  }

  private onExit(worker: Worker, code: number, signal: string): void {
    const lived = Date.now() - (this.started.get(worker) ?? Date.now());
    this.started.delete(worker);
    this.serving.delete(worker);
    if (this.stopping) this.exitedInStop(worker, code, signal);
    else this.restart(worker, code, signal, lived);
  }

  /** A worker ended during the stop: counted when it did not stop cleanly; the last one ends the stop. */
  private exitedInStop(worker: Worker, code: number, signal: string): void {
    if (code !== 0) {
      this.failedStops += 1;
      this.log.warn(
        { worker: worker.process.pid, exitCode: code, signal },
        `worker ${worker.process.pid ?? '?'} did not stop cleanly (${signal ?? `code ${code}`})`,
      );
    }
    if (this.started.size === 0) this.stopped();
  }

  /** A worker died while the primary runs: another is forked after the back-off. */
  private restart(worker: Worker, code: number, signal: string, lived: number): void {
    this.deathsInARow = lived >= STABLE_AFTER_MS ? 1 : this.deathsInARow + 1;
    const delayMs = Math.min(RESTART_DELAY_MAX_MS, RESTART_DELAY_MS * 2 ** (this.deathsInARow - 1));
    this.log.warn(
      { worker: worker.process.pid, exitCode: code, signal, livedMs: lived, restartInMs: delayMs },
      `worker ${worker.process.pid ?? '?'} exited (${signal ?? `code ${code}`}) after ${Math.round(lived / 1000)} s; ` +
        `starting another in ${delayMs} ms`,
    );
    setTimeout(() => {
      if (!this.stopping) this.fork();
    }, delayMs);
  }

  /** Every worker has exited: what the primary started itself closes (the emulator), then it exits. */
  private stopped(): void {
    this.options.onStopped().then(
      () => this.options.exit(this.failedStops === 0 ? 0 : 1),
      (error: unknown) => {
        this.log.error({ err: error }, `the stop failed: ${error instanceof Error ? error.message : String(error)}`);
        this.options.exit(1);
      },
    );
  }

  private stop(signal: string): void {
    const cut = this.stopping;
    this.stopping = true;
    this.log.info(`${signal}${cut ? ' again' : ''}: ${cut ? 'cutting' : 'draining'} ${this.started.size} worker(s)`);
    const message: StopMessage = { type: 'gateway:stop', cut };
    for (const worker of this.started.keys()) this.send(worker, message);
    if (this.started.size === 0 && !cut) this.stopped();
    if (cut) return;
    // Armed as the stop begins, and cleared by nothing: a worker that cannot end itself (stuck) and
    // anything of the primary's own that hangs are cut here.
    setTimeout(() => this.missedDeadline(), this.options.stopDeadlineMs);
  }

  /** The stop did not end by its deadline: the workers still running are killed, and the primary exits 1. */
  private missedDeadline(): void {
    const { stopDeadlineMs, shutdownGraceMs } = this.options;
    const left = [...this.started.keys()];
    this.log.error(
      `the stop did not end within ${stopDeadlineMs} ms ` +
        `(SHUTDOWN_GRACE_MS + ${stopDeadlineMs - shutdownGraceMs} ms)` +
        `${left.length > 0 ? `: killing ${left.length} worker(s)` : ''}; exiting with code 1`,
    );
    for (const worker of left) worker.process.kill('SIGKILL');
    this.options.exit(1);
  }
}
