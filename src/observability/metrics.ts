/**
 * Prometheus metrics (prom-client): GraphQL operations (count, duration, errors by code) and
 * upstream calls (count by status, duration, retries, timeouts, calls answered by joining an
 * identical one in flight, what the upstream cache did, by service and operation), each area's circuit state,
 * sampled answers that did not fit their operation's response schema, the upstream calls each operation was
 * estimated to make and made (demand control), plus the standard process metrics. Each
 * gateway has its own registry (tests build many); the process metrics are the process's,
 * registered once.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { CIRCUIT_STATE_VALUES, type CircuitState } from '../upstream/circuit.js';
import type { UpstreamCallOutcome } from '../upstream/http.js';
import type { UpstreamService } from '../upstream/failure.js';
import type { OperationRecord } from './request-context.js';

/**
 * Distinct operation names that get their own label value; further ones count as `other`.
 * Operation names are chosen by clients, and each label value is a time series in Prometheus.
 */
export const MAX_OPERATION_NAMES = 100;

/** Seconds; from a cache hit to a slow upstream. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The `outcome` label of an upstream call: how it ended. */
const OUTCOMES = {
  ok: 'ok',
  status: 'http_error',
  timeout: 'timeout',
  unavailable: 'unavailable',
  'invalid-response': 'invalid_response',
  // Not sent: the area's circuit was open (circuit.ts), or a 429's Retry-After held the caller back (back-pressure.ts).
  'circuit-open': 'circuit_open',
  'rate-limited': 'rate_limited',
  // Not sent either: the deployment does not serve that area (unserved.ts); such calls are not observed.
  'not-served': 'not_served',
  aborted: 'aborted',
} as const satisfies Record<NonNullable<UpstreamCallOutcome['failure']> | 'ok', string>;

/** The metrics of one gateway. */
export type Metrics = {
  /** counts one finished GraphQL operation */
  observeOperation(operation: OperationRecord): void;
  /**
   * counts one finished upstream call; a `shared` one (it joined a call in flight) is counted by {@link
   * Metrics.observeSharedCall} instead
   */
  observeUpstreamCall(
    call: { service: UpstreamService; operation: string; method: string; shared?: boolean; cached?: string },
    outcome: UpstreamCallOutcome,
  ): void;
  /**
   * counts one GET the upstream cache looked at (UPSTREAM_CACHE): `hit` (a fresh answer, no call),
   * `miss` (sent), `revalidated` (a conditional GET answered 304), `stale` (a stale answer served:
   * stale-while-revalidate or stale-if-error)
   */
  observeUpstreamCache(
    service: UpstreamService,
    operation: string,
    result: 'hit' | 'miss' | 'revalidated' | 'stale',
  ): void;
  /** counts one upstream call that joined an identical one in flight, as it joins */
  observeSharedCall(call: { service: UpstreamService; operation: string }): void;
  /** sets `upstream_circuit_state{service}` to the state an area's circuit has just entered */
  observeCircuit(service: UpstreamService, state: CircuitState): void;
  /** counts one retry the area's retry budget refused */
  observeRetryRefused(call: { service: UpstreamService; operation: string }): void;
  /**
   * counts one place (`path`, array indices as `*`) where a sampled upstream answer did not fit the
   * response schema of its operation (src/contract/sampling.ts)
   */
  observeContractMismatch(service: UpstreamService, operation: string, path: string): void;
  /** adds the CPU time (seconds) one sampled answer's contract check took (src/contract/sampling.ts) */
  observeContractCheck(service: UpstreamService, seconds: number): void;
  /** counts one Redis command that failed, timed out or could not be sent (`operation`: e.g. `cache.get`) */
  observeRedisError(operation: string): void;
  /** live queries (src/live/): how many are open, an invalidation, a poll's outcome, a refusal */
  observeLive(event: LiveEvent): void;
  /**
   * counts one MCP tool call (src/mcp/), by tool and outcome (`ok`, `partial`, `graphql_error`,
   * `invalid_arguments`, `missing_credential`)
   */
  observeMcpToolCall(tool: string, outcome: string): void;
  /**
   * one executed operation's upstream calls: `estimated` before it ran (src/security/upstream-estimate.ts)
   * and `actual`, made through its budget
   */
  observeOperationCost(estimated: number, actual: number): void;
  /** the text exposition of every metric, and its content type */
  render(): Promise<{ contentType: string; body: string }>;
};

/** What {@link Metrics.observeLive} counts. */
export type LiveEvent =
  | { kind: 'open'; open: number }
  /** identifiers invalidated, learnt from a write through a replica (`change`) or from a poll (`poll`) */
  | { kind: 'invalidation'; source: 'change' | 'poll' }
  | {
      kind: 'poll';
      service: UpstreamService;
      outcome: 'changed' | 'unchanged' | 'not_modified' | 'failed' | 'deferred' | 'held';
    }
  | { kind: 'refusal'; limit: 'total' | 'per_client' };

let processRegistry: Registry | undefined;

/** CPU, memory, event loop lag, GC: one set per process, however many gateways it runs. */
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** A registry's metrics as prom-client's JSON, the form its cluster aggregation sums. */
export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

let workerRegistries: Registry[] = [];

/**
 * This cluster worker's metrics, for the primary to sum with the other workers' (prom-client's
 * `AggregatorRegistry.aggregate`): its gateway's registry and the process one. Empty until the
 * gateway is built.
 */
export function workerMetrics(): Promise<MetricsJson[]> {
  return Promise.all(workerRegistries.map((registry) => registry.getMetricsAsJSON()));
}

/**
 * A metric's labelled children by their label values. The label values come from a bounded set
 * (service, operation, method, status, outcome; operation names capped at {@link MAX_OPERATION_NAMES}).
 */
function labelled<T>(child: (...values: string[]) => T): (...values: string[]) => T {
  const children = new Map<string, T>();
  return (...values) => {
    const key = values.join('\u0000');
    let found = children.get(key);
    if (found === undefined) {
      found = child(...values);
      children.set(key, found);
    }
    return found;
  };
}

/** A count of upstream calls by area and operation. */
function perOperation(name: string, help: string, registers: Registry[]) {
  return new Counter({ name, help, labelNames: ['service', 'operation'] as const, registers });
}

/** GraphQL operations: count and duration (by the label sets a request touches), errors by code. */
function operationMetrics(registers: Registry[]) {
  const operations = new Counter({
    name: 'graphql_operations_total',
    help: 'GraphQL operations answered, by operation name and type, and whether the result had errors',
    labelNames: ['operation_name', 'operation_type', 'result'] as const,
    registers,
  });
  const operationDuration = new Histogram({
    name: 'graphql_operation_duration_seconds',
    help: 'Time to answer one GraphQL operation (parse, validate, execute, upstream calls included)',
    labelNames: ['operation_name', 'operation_type'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const errors = new Counter({
    name: 'graphql_errors_total',
    help: 'Errors in GraphQL results, by operation name and extensions.code',
    labelNames: ['operation_name', 'code'] as const,
    registers,
  });
  // The label sets a request touches, kept by name: one map lookup per observation instead of
  // prom-client hashing the labels each time (which showed in the profile of a 60-call request).
  return {
    count: labelled((operation_name, operation_type, result) =>
      operations.labels({ operation_name, operation_type, result }),
    ),
    time: labelled((operation_name, operation_type) => operationDuration.labels({ operation_name, operation_type })),
    errors,
  };
}

/** Upstream calls: count and duration (by the label sets a request touches), retries, timeouts. */
function upstreamCallMetrics(registers: Registry[]) {
  const upstreamRequests = new Counter({
    name: 'upstream_requests_total',
    help:
      "Upstream REST calls, by service, operation, method, the last answer's HTTP status (none: no answer) and " +
      'outcome',
    labelNames: ['service', 'operation', 'method', 'status', 'outcome'] as const,
    registers,
  });
  const upstreamDuration = new Histogram({
    name: 'upstream_request_duration_seconds',
    help: 'Time of one upstream REST call, retries and the waits between them included',
    labelNames: ['service', 'operation', 'method'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  // Kept by label set as well (see operationMetrics).
  return {
    count: labelled((service, operation, method, status, outcome) =>
      upstreamRequests.labels({ service, operation, method, status, outcome }),
    ),
    time: labelled((service, operation, method) => upstreamDuration.labels({ service, operation, method })),
    retries: perOperation(
      'upstream_retries_total',
      'Retries of upstream calls (GETs after a connection error or a 502/503/504)',
      registers,
    ),
    retriesRefused: perOperation(
      'upstream_retries_refused_total',
      "Retries of upstream calls not made because the area's retry budget was spent (UPSTREAM_RETRY_BUDGET_PERCENT)",
      registers,
    ),
    timeouts: perOperation(
      'upstream_timeouts_total',
      'Upstream calls that failed on a timeout (connect, headers, body or the call deadline)',
      registers,
    ),
  };
}

/** Upstream calls answered by joining an identical one in flight. */
function sharedCallMetrics(registers: Registry[]) {
  return perOperation(
    'upstream_shared_calls_total',
    'Upstream calls that joined an identical GET already in flight instead of sending a request of their own ' +
      '(UPSTREAM_DEDUPE)',
    registers,
  );
}

/** What the upstream cache did with each GET it looked at. */
function upstreamCacheMetrics(registers: Registry[]) {
  return new Counter({
    name: 'upstream_cache_total',
    help:
      'Upstream GETs the upstream cache looked at (UPSTREAM_CACHE), by result: hit (a fresh kept answer, no call), ' +
      'miss (sent upstream), revalidated (a conditional GET answered 304), stale (a stale answer served under ' +
      'stale-while-revalidate or stale-if-error)',
    labelNames: ['service', 'operation', 'result'] as const,
    registers,
  });
}

/** Where each area's circuit stands (src/upstream/circuit.ts). */
function circuitMetrics(registers: Registry[]) {
  return new Gauge({
    name: 'upstream_circuit_state',
    help: "State of each upstream area's circuit breaker: 0 closed, 1 half-open (a trial call is due or under way), 2 open",
    labelNames: ['service'] as const,
    registers,
    // Summed over a cluster's workers, states would add up to nonsense: the worst worker's is shown.
    aggregator: 'max',
  });
}

/** Redis commands that failed, by use. */
function redisMetrics(registers: Registry[]) {
  return new Counter({
    name: 'redis_errors_total',
    help: 'Redis commands that failed, timed out or were not sent while Redis was unreachable (REDIS_URL), by use',
    labelNames: ['operation'] as const,
    registers,
  });
}

/** Places where sampled upstream answers did not fit their operation's response schema. */
function contractMetrics(registers: Registry[]) {
  const mismatches = new Counter({
    name: 'upstream_contract_mismatches_total',
    help:
      'Places where a sampled upstream answer did not fit the response schema of its operation ' +
      '(UPSTREAM_CONTRACT_SAMPLE), by service, operation and JSON path (array indices as *)',
    labelNames: ['service', 'operation', 'path'] as const,
    registers,
  });
  const checkSeconds = new Counter({
    name: 'upstream_contract_check_seconds_total',
    help:
      'Time spent checking sampled upstream answers against their response schemas (UPSTREAM_CONTRACT_SAMPLE), ' +
      'by service: what the sampling costs the process',
    labelNames: ['service'] as const,
    registers,
  });
  return {
    mismatch: labelled((service, operation, path) => mismatches.labels({ service, operation, path })),
    checked: (service: UpstreamService, seconds: number) => checkSeconds.inc({ service }, seconds),
  };
}

/** Live queries: open, invalidations, polls, refusals (src/live/). */
function liveMetrics(registers: Registry[]) {
  return {
    open: new Gauge({ name: 'live_queries_open', help: 'Live queries (@live) open', registers }),
    invalidations: new Counter({
      name: 'live_query_invalidations_total',
      help: 'Invalidations of live queries, by what told of the change: a write through a replica (change) or a poll (poll)',
      labelNames: ['source'] as const,
      registers,
    }),
    polls: new Counter({
      name: 'live_query_polls_total',
      help:
        'Polls of upstream reads that live queries watch, by service and outcome: changed, unchanged, not_modified ' +
        '(304), failed; not sent: deferred (over LIVE_POLL_MAX_PER_SECOND, left to the next round), held (the ' +
        "area's circuit open or a Retry-After not passed)",
      labelNames: ['service', 'outcome'] as const,
      registers,
    }),
    refusals: new Counter({
      name: 'live_query_refusals_total',
      help: 'Live queries refused with LIVE_QUERY_LIMIT, by the limit reached: total (LIVE_QUERIES_MAX) or per_client',
      labelNames: ['limit'] as const,
      registers,
    }),
  };
}

/** Upstream calls per operation: from none to UPSTREAM_MAX_CALLS_PER_OPERATION's default and beyond. */
const CALL_COUNT_BUCKETS = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

/** Demand control: the upstream calls of each operation, as estimated before it ran and as made. */
function operationCostMetrics(registers: Registry[]) {
  const histogram = (name: string, help: string) =>
    new Histogram({ name, help, buckets: CALL_COUNT_BUCKETS, registers });
  return {
    estimated: histogram(
      'graphql_operation_upstream_calls_estimated',
      'Upstream calls one executed GraphQL operation was estimated to make before it ran (at most)',
    ),
    actual: histogram(
      'graphql_operation_upstream_calls',
      'Upstream calls one executed GraphQL operation made (those the upstream cache or a call in flight answered included)',
    ),
  };
}

/** An upstream call as {@link Metrics.observeUpstreamCall} is given it. */
type UpstreamCall = Parameters<Metrics['observeUpstreamCall']>[0];

/** The metrics of one gateway, in a registry of its own (see {@link createMetrics}). */
class GatewayMetrics implements Metrics {
  private readonly registry = new Registry();
  private readonly operations: ReturnType<typeof operationMetrics>;
  private readonly upstream: ReturnType<typeof upstreamCallMetrics>;
  private readonly upstreamShared: ReturnType<typeof sharedCallMetrics>;
  private readonly upstreamCache: ReturnType<typeof upstreamCacheMetrics>;
  private readonly redisErrors: ReturnType<typeof redisMetrics>;
  private readonly circuits: ReturnType<typeof circuitMetrics>;
  private readonly contractMismatches: ReturnType<typeof contractMetrics>;
  private readonly live: ReturnType<typeof liveMetrics>;
  private readonly mcpToolCalls: Counter<'tool' | 'outcome'>;
  private readonly operationCost: ReturnType<typeof operationCostMetrics>;
  /** the operation names that have their own label value, at most {@link MAX_OPERATION_NAMES} */
  private readonly knownNames = new Set<string>();
  private readonly clusterMetrics: (() => Promise<string>) | undefined;

  constructor(clusterMetrics: (() => Promise<string>) | undefined) {
    this.clusterMetrics = clusterMetrics;
    // In a cluster worker, what the primary collects from this process and sums (workerMetrics).
    if (clusterMetrics) workerRegistries = [this.registry, processMetrics()];
    const registers = [this.registry];
    this.operations = operationMetrics(registers);
    this.upstream = upstreamCallMetrics(registers);
    this.upstreamShared = sharedCallMetrics(registers);
    this.upstreamCache = upstreamCacheMetrics(registers);
    this.redisErrors = redisMetrics(registers);
    this.circuits = circuitMetrics(registers);
    this.contractMismatches = contractMetrics(registers);
    this.live = liveMetrics(registers);
    this.operationCost = operationCostMetrics(registers);
    this.mcpToolCalls = new Counter({
      name: 'mcp_tool_calls_total',
      help: 'MCP tool calls (MCP=true), by tool and outcome',
      labelNames: ['tool', 'outcome'] as const,
      registers,
    });
  }

  observeOperation(operation: OperationRecord): void {
    const operation_name = this.nameLabel(operation.name);
    const operation_type = operation.type ?? 'unknown';
    const { count, time, errors } = this.operations;
    count(operation_name, operation_type, operation.errorCodes.length > 0 ? 'error' : 'success').inc();
    time(operation_name, operation_type).observe(((operation.ended ?? operation.started) - operation.started) / 1000);
    for (const code of operation.errorCodes) errors.inc({ operation_name, code });
  }

  observeUpstreamCall(
    { service, operation, method, shared, cached }: UpstreamCall,
    outcome: UpstreamCallOutcome,
  ): void {
    // A joined call sent nothing: the call it joined is counted, timed and its retries counted
    // once. Nor did one the cache answered (counted in upstream_cache_total).
    if (shared || cached !== undefined) return;
    const { count, time, retries, timeouts } = this.upstream;
    count(
      service,
      operation,
      method,
      outcome.status === undefined ? 'none' : String(outcome.status),
      OUTCOMES[outcome.failure ?? 'ok'],
    ).inc();
    // A call held back (circuit open, Retry-After) sent nothing: its instant refusal is no upstream latency.
    if (outcome.failure !== 'circuit-open' && outcome.failure !== 'rate-limited')
      time(service, operation, method).observe(outcome.durationMs / 1000);
    if (outcome.retries > 0) retries.inc({ service, operation }, outcome.retries);
    if (outcome.failure === 'timeout') timeouts.inc({ service, operation });
  }

  observeUpstreamCache(
    service: UpstreamService,
    operation: string,
    result: 'hit' | 'miss' | 'revalidated' | 'stale',
  ): void {
    this.upstreamCache.inc({ service, operation, result });
  }

  observeSharedCall({ service, operation }: { service: UpstreamService; operation: string }): void {
    this.upstreamShared.inc({ service, operation });
  }

  observeCircuit(service: UpstreamService, state: CircuitState): void {
    this.circuits.set({ service }, CIRCUIT_STATE_VALUES[state]);
  }

  observeRetryRefused({ service, operation }: { service: UpstreamService; operation: string }): void {
    this.upstream.retriesRefused.inc({ service, operation });
  }

  observeContractMismatch(service: UpstreamService, operation: string, path: string): void {
    this.contractMismatches.mismatch(service, operation, path).inc();
  }

  observeContractCheck(service: UpstreamService, seconds: number): void {
    this.contractMismatches.checked(service, seconds);
  }

  observeRedisError(operation: string): void {
    this.redisErrors.inc({ operation });
  }

  observeLive(event: LiveEvent): void {
    const { live } = this;
    if (event.kind === 'open') live.open.set(event.open);
    else if (event.kind === 'invalidation') live.invalidations.inc({ source: event.source });
    else if (event.kind === 'poll') live.polls.inc({ service: event.service, outcome: event.outcome });
    else live.refusals.inc({ limit: event.limit });
  }

  observeOperationCost(estimated: number, actual: number): void {
    this.operationCost.estimated.observe(estimated);
    this.operationCost.actual.observe(actual);
  }

  observeMcpToolCall(tool: string, outcome: string): void {
    this.mcpToolCalls.inc({ tool, outcome });
  }

  async render(): Promise<{ contentType: string; body: string }> {
    const { registry, clusterMetrics } = this;
    if (clusterMetrics) return { contentType: registry.contentType, body: await clusterMetrics() };
    // Two registries, one exposition: the names do not overlap.
    const [own, process] = await Promise.all([registry.metrics(), processMetrics().metrics()]);
    return { contentType: registry.contentType, body: `${own.trimEnd()}\n${process}` };
  }

  /** An operation's name as a label value: `anonymous` without one, `other` past {@link MAX_OPERATION_NAMES} names. */
  private nameLabel(name: string | undefined): string {
    if (name === undefined) return 'anonymous';
    if (this.knownNames.has(name)) return name;
    if (this.knownNames.size >= MAX_OPERATION_NAMES) return 'other';
    this.knownNames.add(name);
    return name;
  }
}

/**
 * Creates the metrics of one gateway, in a registry of its own. In a cluster worker,
 * `clusterMetrics` gives the text of every worker's metrics summed by the primary (prom-client's
 * cluster aggregation over what {@link workerMetrics} gives in each worker).
 */
export function createMetrics(clusterMetrics?: () => Promise<string>): Metrics {
  return new GatewayMetrics(clusterMetrics);
}
