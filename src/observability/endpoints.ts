/**
 * The operations endpoints a request can ask for besides GraphQL: `GET /metrics` (Prometheus
 * text, summed over the workers of a cluster) and `GET /readiness` (can the gateway reach its
 * upstreams?). yoga answers `/health` itself. A plugin of its own, apart from the one that
 * observes every request, so that each has one job.
 */
import type { Plugin } from 'graphql-yoga';
import type { Readiness } from './health.js';
import { METRICS_PATH, READINESS_PATH } from './paths.js';

/** What the endpoints answer from. */
export type EndpointSources = {
  /** the text of /metrics; undefined when METRICS is off (then /metrics is GraphQL's 404) */
  metrics: { render: () => Promise<{ contentType: string; body: string }> } | undefined;
  /** checks the upstreams, once per request to /readiness */
  readiness: () => Promise<Readiness>;
};

/** The yoga plugin that serves `/metrics` and `/readiness`. */
export function useOperationsEndpoints(sources: EndpointSources): Plugin {
  const { metrics } = sources;
  return {
    async onRequest(payload) {
      const { request, url, fetchAPI } = payload;
      if (request.method !== 'GET') return;
      if (url.pathname === METRICS_PATH && metrics) {
        const { contentType, body } = await metrics.render();
        payload.endResponse(
          new fetchAPI.Response(body, { headers: { 'content-type': contentType, 'cache-control': 'no-store' } }),
        );
      } else if (url.pathname === READINESS_PATH) {
        const readiness = await sources.readiness();
        const failing = Object.entries({
          ...readiness.upstreams,
          ...(readiness.redis && { redis: readiness.redis }),
        }).flatMap(([name, result]) => (result.ready ? [] : [`${name} (${result.reason})`]));
        const what = readiness.status === 'degraded' ? 'degraded' : 'not ready';
        const body = failing.length > 0 ? { ...readiness, message: `${what}: ${failing.join(', ')}` } : readiness;
        const status = readiness.status === 'unavailable' ? 503 : 200;
        payload.endResponse(fetchAPI.Response.json(body, { status, headers: { 'cache-control': 'no-store' } }));
      }
    },
  };
}
