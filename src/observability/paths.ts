/**
 * Paths answered by the gateway besides GraphQL. A module of their own, so that the start-up
 * banner (printed by a cluster primary too) names them without loading what serves them.
 */
export const READINESS_PATH = '/readiness';
export const METRICS_PATH = '/metrics';
/** yoga's own liveness endpoint: 200 while the process serves requests. */
export const HEALTH_PATH = '/health';
