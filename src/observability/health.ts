/**
 * Readiness: can the gateway reach its upstreams? Each configured base URL is asked once (a
 * `GET` of the base URL, no credential) within a short timeout. Any HTTP answer means the
 * upstream is there, except 502, 503 and 504, which a proxy or the upstream itself gives when
 * it cannot serve. Liveness needs nothing of the sort: yoga answers `/health` itself.
 */
import { request } from 'undici';
import type { UpstreamService } from '../upstream/http.js';

/** One upstream to check. */
export type ReadinessTarget = { service: UpstreamService; baseUrl: string };

/** What the check found for one upstream. */
export type UpstreamReadiness = { ready: true; latencyMs: number } | { ready: false; reason: string };

/** The answer of `/readiness`. */
export type Readiness = { status: 'ready' | 'unavailable'; upstreams: Partial<Record<UpstreamService, UpstreamReadiness>> };

const UNAVAILABLE_STATUSES = new Set([502, 503, 504]);

async function probe(baseUrl: string, timeoutMs: number): Promise<UpstreamReadiness> {
  const started = performance.now();
  try {
    const answer = await request(baseUrl, { method: 'GET', signal: AbortSignal.timeout(timeoutMs), headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    // Only the status counts; the body is dropped, and with it the connection is freed.
    await answer.body.dump();
    if (UNAVAILABLE_STATUSES.has(answer.statusCode)) return { ready: false, reason: `answered ${answer.statusCode}` };
    return { ready: true, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    const code = error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
    if (error instanceof Error && (error.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT')) {
      return { ready: false, reason: `no answer within ${timeoutMs} ms` };
    }
    // The reason names the failure (ECONNREFUSED, ENOTFOUND), never the URL, which may carry secrets.
    return { ready: false, reason: code === 'ECONNREFUSED' ? 'connection refused' : (code ?? 'unreachable') };
  }
}

/** Checks every target at once; ready when all are. */
export async function checkReadiness(targets: readonly ReadinessTarget[], timeoutMs: number): Promise<Readiness> {
  const results = await Promise.all(targets.map(async (target) => [target.service, await probe(target.baseUrl, timeoutMs)] as const));
  return {
    status: results.every(([, result]) => result.ready) ? 'ready' : 'unavailable',
    upstreams: Object.fromEntries(results),
  };
}
