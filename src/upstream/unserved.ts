/**
 * The client of an area this deployment does not serve: its URL is not set while the other's is
 * (a pet store without a plant area, say). The schema stays the same whatever a deployment
 * serves, so that apps, trusted documents and a federated router never see it change with the
 * settings; a field of that area answers `UPSTREAM_NOT_SERVED` at once, calling nothing.
 */
import { UpstreamError, type UpstreamService } from './failure.js';
import type { UpstreamPool } from './http.js';

/** What each area is called in the messages a caller reads. */
const AREA_NAMES: Readonly<Record<UpstreamService, string>> = { petstore: 'the pet store', plants: 'the plant area' };

/** A client of `service` that refuses every call, sending nothing. */
export function unservedArea(service: UpstreamService): UpstreamPool {
  const refusal = (operation: string) =>
    new UpstreamError({
      service,
      operation,
      failure: 'not-served',
      message: `${AREA_NAMES[service]} is not served by this gateway (no upstream is configured for it)`,
    });
  return {
    service,
    request: (call) => Promise.reject(refusal(call.operation)),
    ping: () => Promise.reject(refusal('readiness')),
    close: () => Promise.resolve(),
  };
}
