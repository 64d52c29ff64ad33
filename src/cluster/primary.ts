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
export const RESTART_DELAY_MS = 100;
/** The longest wait before a dead worker is replaced. */
export const RESTART_DELAY_MAX_MS = 10_000;
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
  const { log } = options;
  const buckets = createMemoryRateLimitStore();
  const started = new Map<Worker, number>();
  // The workers that listen: a worker still starting has no metrics yet, and would not answer.
  const serving = new Set<Worker>();
  const collecting = new Map<number, (worker: Worker, message: CollectedMessage) => void>();
  let collections = 0;
  let deathsInARow = 0;
  let listening = 0;
  let stopping = false;
  /** workers that did not stop cleanly (their exit code was not 0) */
  let failedStops = 0;

  const send = (worker: Worker, message: ToWorker) => {
    if (worker.isConnected()) worker.send(message);
  };

  const fork = () => {
    started.set(cluster.fork(), Date.now());
  };

  /** Every serving worker's metrics, summed by prom-client's cluster aggregation. */
  const sumMetrics = async (): Promise<string> => {
    const id = (collections += 1);
    const asked = [...serving].filter((worker) => worker.isConnected());
    const answered = new Set<Worker>();
    const metrics: MetricsJson[] = [];
    await new Promise<void>((resolve) => {
      if (asked.length === 0) return resolve();
      const timer = setTimeout(() => {
        collecting.delete(id);
        const missing = asked.filter((worker) => !answered.has(worker)).map((worker) => worker.process.pid ?? '?');
        log.warn(
          { workers: missing },
          `/metrics without worker(s) ${missing.join(', ')}: no answer within ${COLLECT_TIMEOUT_MS} ms`,
        );
        resolve();
      }, COLLECT_TIMEOUT_MS);
      collecting.set(id, (worker, message) => {
        answered.add(worker);
        if (message.metrics) metrics.push(...message.metrics);
        else
          log.warn(
            { worker: worker.process.pid },
            `/metrics without worker ${worker.process.pid ?? '?'}: ${message.error ?? 'no metrics'}`,
          );
        if (answered.size < asked.length) return;
        clearTimeout(timer);
        collecting.delete(id);
        resolve();
      });
      for (const worker of asked) send(worker, { type: 'gateway:collect', id });
    });
    return AggregatorRegistry.aggregate(metrics).metrics();
  };

  cluster.on('message', (worker, message: unknown) => {
    if (isMessage<ReadyMessage>(message, 'gateway:ready')) {
      send(worker, { type: 'gateway:start', ...options.upstreams });
    } else if (isMessage<TakeMessage>(message, 'gateway:take')) {
      void Promise.resolve(buckets.take(message.key, { perMinute: message.perMinute }, message.now)).then((take) =>
        send(worker, { type: 'gateway:taken', id: message.id, take }),
      );
    } else if (isMessage<MetricsMessage>(message, 'gateway:metrics')) {
      sumMetrics().then(
        (text) => send(worker, { type: 'gateway:metrics-answer', id: message.id, text }),
        (error: unknown) =>
          send(worker, {
            type: 'gateway:metrics-answer',
            id: message.id,
            error: error instanceof Error ? error.message : 'failed',
          }),
      );
    } else if (isMessage<CollectedMessage>(message, 'gateway:collected')) {
      collecting.get(message.id)?.(worker, message);
    } else if (isMessage<ListeningMessage>(message, 'gateway:listening')) {
      serving.add(worker);
      // Ready once every worker is: before that, all connections would land on the first ones.
      listening += 1;
      if (listening === options.workers) options.onListening(message.port);
      if (listening > options.workers)
        log.info({ worker: worker.process.pid }, `worker ${worker.process.pid ?? '?'} is serving`);
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (started.get(worker) ?? Date.now());
    started.delete(worker);
    serving.delete(worker);
    if (stopping) {
      if (code !== 0) {
        failedStops += 1;
        log.warn(
          { worker: worker.process.pid, exitCode: code, signal },
          `worker ${worker.process.pid ?? '?'} did not stop cleanly (${signal ?? `code ${code}`})`,
        );
      }
      if (started.size === 0) stopped();
      return;
    }
    deathsInARow = lived >= STABLE_AFTER_MS ? 1 : deathsInARow + 1;
    const delayMs = Math.min(RESTART_DELAY_MAX_MS, RESTART_DELAY_MS * 2 ** (deathsInARow - 1));
    log.warn(
      { worker: worker.process.pid, exitCode: code, signal, livedMs: lived, restartInMs: delayMs },
      `worker ${worker.process.pid ?? '?'} exited (${signal ?? `code ${code}`}) after ${Math.round(lived / 1000)} s; ` +
        `starting another in ${delayMs} ms`,
    );
    setTimeout(() => {
      if (!stopping) fork();
    }, delayMs);
  });

  /** Every worker has exited: what the primary started itself closes (the emulator), then it exits. */
  const stopped = () => {
    options.onStopped().then(
      () => options.exit(failedStops === 0 ? 0 : 1),
      (error: unknown) => {
        log.error({ err: error }, `the stop failed: ${error instanceof Error ? error.message : String(error)}`);
        options.exit(1);
      },
    );
  };

  const stop = (signal: string) => {
    const cut = stopping;
    stopping = true;
    log.info(`${signal}${cut ? ' again' : ''}: ${cut ? 'cutting' : 'draining'} ${started.size} worker(s)`);
    const message: StopMessage = { type: 'gateway:stop', cut };
    for (const worker of started.keys()) send(worker, message);
    if (started.size === 0 && !cut) stopped();
    if (cut) return;
    // Armed as the stop begins, and cleared by nothing: a worker that cannot end itself (stuck) and
    // anything of the primary's own that hangs are cut here.
    setTimeout(() => {
      const left = [...started.keys()];
      log.error(
        `the stop did not end within ${options.stopDeadlineMs} ms ` +
          `(SHUTDOWN_GRACE_MS + ${options.stopDeadlineMs - options.shutdownGraceMs} ms)` +
          `${left.length > 0 ? `: killing ${left.length} worker(s)` : ''}; exiting with code 1`,
      );
      for (const worker of left) worker.process.kill('SIGKILL');
      options.exit(1);
    }, options.stopDeadlineMs);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  for (let index = 0; index < options.workers; index += 1) fork();
}
