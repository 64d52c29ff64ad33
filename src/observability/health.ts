/**
 * Readiness: can the gateway reach its upstreams? Each area's client asks its base URL once
 * through its own pool (a `GET`, no credential) within a short timeout. Any HTTP answer means the
 * upstream is there, except 502, 503 and 504, which a proxy or the upstream itself gives when
 * it cannot serve. An area the gateway does not call now (its circuit is open) is not asked
 * either, and is not ready: requests that need it fail at once, as they would if it were
 * unreachable. (A 429's Retry-After holds back one caller, not the area.) Each area's entry says where its circuit stands.
 * Liveness needs nothing of the sort: yoga answers `/health` itself.
 */
import { transportFailure, UNAVAILABLE_STATUSES, type UpstreamService } from '../upstream/failure.js';
import type { SharedRedis } from '../redis/connection.js';
import type { CircuitState } from '../upstream/circuit.js';
import type { UpstreamPool } from '../upstream/http.js';

/** One upstream to check: its client. */
export type ReadinessTarget = Pick<UpstreamPool, 'service' | 'ping' | 'standing'>;

/** What the check found for one upstream. */
type UpstreamReadiness = { ready: true; latencyMs: number } | { ready: false; reason: string };

/** What the check found for one upstream area, with where its circuit stands. */
type AreaReadiness = UpstreamReadiness & { circuit: CircuitState };

/**
 * The answer of `/readiness`. `degraded`: the upstreams are ready but Redis is not (answered 200
 * unless REDIS_REQUIRED: requests are served, without shared state).
 */
export type Readiness = {
  status: 'ready' | 'degraded' | 'unavailable';
  upstreams: Partial<Record<UpstreamService, AreaReadiness>>;
  /** with REDIS_URL */
  redis?: UpstreamReadiness & { required: boolean };
};

/** Redis, when REDIS_URL is set, and whether readiness needs it. */
export type RedisReadiness = { redis?: Pick<SharedRedis, 'ping'> | undefined; redisRequired: boolean };

/** An area's readiness: not asked while the gateway does not call it; otherwise its answer to a ping. */
async function checkArea(target: ReadinessTarget, timeoutMs: number): Promise<AreaReadiness> {
  const { circuit, circuitRemainingMs } = target.standing?.() ?? { circuit: 'closed', circuitRemainingMs: 0 };
  const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
  if (circuit === 'open')
    return { ready: false, reason: `circuit open, not called for ${seconds(circuitRemainingMs)} s`, circuit };
  return { ...(await probe(target, timeoutMs)), circuit };
}

async function probe(target: ReadinessTarget, timeoutMs: number): Promise<UpstreamReadiness> {
  const started = performance.now();
  try {
    const status = await target.ping(timeoutMs);
    if (UNAVAILABLE_STATUSES.has(status)) return { ready: false, reason: `answered ${status}` };
    return { ready: true, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    const { kind, reason } = transportFailure(error);
    if (kind !== 'connection') return { ready: false, reason: `no answer within ${timeoutMs} ms` };
    // The reason names the failure (ECONNREFUSED, ENOTFOUND), never the URL, which may carry secrets.
    return {
      ready: false,
      reason: reason === 'ECONNREFUSED' ? 'connection refused' : reason === 'connection error' ? 'unreachable' : reason,
    };
  }
}

/** Checks every target (and Redis) at once; ready when all are. */
export async function checkReadiness(
  targets: readonly ReadinessTarget[],
  timeoutMs: number,
  shared: RedisReadiness = { redisRequired: false },
): Promise<Readiness> {
  const [results, redis] = await Promise.all([
    Promise.all(targets.map(async (target) => [target.service, await checkArea(target, timeoutMs)] as const)),
    shared.redis?.ping(),
  ]);
  const upstreamsReady = results.every(([, result]) => result.ready);
  const redisReady = redis === undefined || redis.ready;
  return {
    status:
      upstreamsReady && redisReady ? 'ready' : upstreamsReady && !shared.redisRequired ? 'degraded' : 'unavailable',
    upstreams: Object.fromEntries(results),
    ...(redis ? { redis: { ...redis, required: shared.redisRequired } } : {}),
  };
}
