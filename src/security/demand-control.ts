/**
 * Demand control: each operation's upstream calls are estimated after validation, before it runs
 * (upstream-estimate.ts), and
 *
 * - an operation estimated over UPSTREAM_MAX_CALLS_PER_OPERATION is refused whole, with 400
 *   `COST_ESTIMATED_TOO_EXPENSIVE` and no upstream call (the budget of fan-out.ts stays as the
 *   backstop, for what no estimate foresees);
 * - with RATE_LIMIT_COST_PER_MINUTE, the caller's budget of upstream calls (cost-budget.ts) is
 *   charged the estimate; one it does not hold now is refused with 429 `COST_RATE_LIMITED` and a
 *   Retry-After; once the operation has run, what it did not make is refunded;
 * - a request that sends `x-gateway-cost: 1` gets `extensions.cost`: `requestedQueryCost` (the
 *   estimate), `actualQueryCost` (the calls made) and, with the budget, `throttleStatus`
 *   (Shopify's names);
 * - /metrics gets both counts of every executed operation.
 *
 * Its `onExecute` runs on both HTTP paths (envelop's); its `onResultProcess` the HTTP front calls
 * itself (src/http/plugin-table.ts).
 */
import { GraphQLError, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { HeaderSource } from '../credentials.js';
import { codedError, rebuilt } from '../errors.js';
import type { UpstreamCallBudget } from './fan-out.js';
import type { CostBudgetStore, CostBucketRule, CostCharge } from './cost-budget.js';
import { clientOf, peerOf } from './rate-limit.js';
import { UpstreamEstimator } from './upstream-estimate.js';

/** The request header that asks for `extensions.cost`, with the value `1`. */
const COST_HEADER = 'x-gateway-cost';

/** What demand control is set with. */
export type DemandControlOptions = {
  /** UPSTREAM_MAX_CALLS_PER_OPERATION: an operation estimated over it is refused. @default 200 */
  maxCalls: number;
  /** RATE_LIMIT_COST_PER_MINUTE, when on (over 0) */
  budget?: {
    perMinute: number;
    store: CostBudgetStore;
    /** TRUST_PROXY_HOPS, for the caller's address */
    trustProxyHops: number;
    /** the clock, in milliseconds. @default Date.now */
    now?: () => number;
  };
  /** given each executed operation's estimated and actual calls (/metrics) */
  observe?: (estimated: number, actual: number) => void;
};

/** The caller's budget as `extensions.cost.throttleStatus` shows it (Shopify's names). */
type ThrottleStatus = { maximumAvailable: number; currentlyAvailable: number; restoreRate: number };

/** One operation's cost, as `extensions.cost` shows it. */
type OperationCost = {
  requested: number;
  actual: number;
  throttle?: ThrottleStatus;
  /** the refund, while Redis makes it: the answer's throttle status waits for it */
  refunding?: Promise<void>;
};

/** What yoga's context holds that demand control reads. */
type OperationContext = { request?: { headers: HeaderSource }; budget?: UpstreamCallBudget };

/** The refusal of an operation estimated over `max` calls. */
function tooExpensive(estimated: number, max: number, per: string): GraphQLError {
  const error = codedError(
    'COST_ESTIMATED_TOO_EXPENSIVE',
    `This operation may make ${estimated} upstream calls, over the ${max} allowed ${per}; ask for fewer items per operation`,
    { status: 400 },
  );
  return rebuilt(error, { extensions: { ...error.extensions, cost: { estimated, max } } });
}

/** The refusal of an operation the caller's budget does not hold now (or cannot be asked about). */
function throttled(estimated: number, charge: CostCharge, rule: CostBucketRule): GraphQLError {
  const retryAfter = Math.max(1, Math.ceil(charge.retryAfterMs / 1000));
  const headers = { 'Retry-After': String(retryAfter) };
  if (charge.unavailable)
    return codedError('RATE_LIMIT_UNAVAILABLE', `Rate limits cannot be checked just now; retry in ${retryAfter} s`, {
      status: 503,
      headers,
    });
  return codedError(
    'COST_RATE_LIMITED',
    `This operation may make ${estimated} upstream calls and this client has ${Math.floor(charge.available)} of its ` +
      `${rule.perMinute} per minute left; retry in ${retryAfter} s`,
    { status: 429, headers },
  );
}

/** `result` with `extensions.cost`. */
function withCost(result: ExecutionResult, cost: OperationCost | undefined): ExecutionResult {
  const shown = {
    requestedQueryCost: cost?.requested ?? 0,
    actualQueryCost: cost?.actual ?? 0,
    ...(cost?.throttle ? { throttleStatus: cost.throttle } : {}),
  };
  return { ...result, extensions: { ...result.extensions, cost: shown } };
}

/** The clients' budgets of upstream calls (RATE_LIMIT_COST_PER_MINUTE), as demand control charges and refunds them. */
class ClientBudgets {
  readonly perMinute: number;
  readonly #rule: CostBucketRule;
  readonly #store: CostBudgetStore;
  readonly #hops: number;
  readonly #now: () => number;

  constructor(options: NonNullable<DemandControlOptions['budget']>) {
    this.perMinute = options.perMinute;
    this.#rule = { perMinute: options.perMinute };
    this.#store = options.store;
    this.#hops = options.trustProxyHops;
    this.#now = options.now ?? Date.now;
  }

  /** The client an operation is for: its credential, else its address (as the request limit keys it). */
  clientOf(context: object, headers: HeaderSource): string {
    return clientOf(peerOf(context), headers, this.#hops);
  }

  /**
   * Charges the client's budget the operation's estimate: undefined when it holds it, else the
   * refusal; at once with the store in this process, a promise with Redis.
   */
  charge(cost: OperationCost, client: string): GraphQLError | undefined | Promise<GraphQLError | undefined> {
    const charged = this.#store.charge(client, cost.requested, this.#rule, this.#now());
    return charged instanceof Promise ? charged.then((done) => this.charged(cost, done)) : this.charged(cost, charged);
  }

  private charged(cost: OperationCost, charged: CostCharge): GraphQLError | undefined {
    if (!charged.allowed) return throttled(cost.requested, charged, this.#rule);
    cost.throttle = {
      maximumAvailable: this.perMinute,
      currentlyAvailable: Math.floor(charged.available),
      restoreRate: this.perMinute / 60,
    };
    return undefined;
  }

  /** Gives back to the client's budget what the operation was charged over the calls it made. */
  refund(cost: OperationCost, client: string): void {
    const throttle = cost.throttle;
    if (throttle === undefined || cost.requested <= cost.actual) return;
    const refunded = this.#store.refund(client, cost.requested - cost.actual, this.#rule, this.#now());
    const settle = (available: number) => void (throttle.currentlyAvailable = Math.floor(available));
    if (typeof refunded === 'number') settle(refunded);
    else cost.refunding = refunded.then(settle, () => undefined);
  }
}

/** The estimator of each schema the plugin is given (one: the gateway's). */
function estimators(): (schema: GraphQLSchema) => UpstreamEstimator {
  const bySchema = new WeakMap<GraphQLSchema, UpstreamEstimator>();
  return (schema) => {
    let estimator = bySchema.get(schema);
    if (estimator === undefined) bySchema.set(schema, (estimator = new UpstreamEstimator(schema)));
    return estimator;
  };
}

/** The demand control plugin. */
export function useDemandControl(options: DemandControlOptions): Plugin {
  const { maxCalls, observe } = options;
  const estimatorOf = estimators();
  const budget = options.budget && new ClientBudgets(options.budget);
  // Each request's operations (a batch has several), in the order they ran, for its answer.
  const costs = new WeakMap<object, OperationCost[]>();

  /** After the operation: its calls made observed, and what the estimate over-charged refunded. */
  const finish = (cost: OperationCost, context: OperationContext, client: string | undefined) => {
    const made = context.budget?.made;
    if (made === undefined) return;
    cost.actual = made;
    observe?.(cost.requested, made);
    if (budget && client !== undefined) budget.refund(cost, client);
  };

  return {
    onExecute({ args, setResultAndStopExecution }) {
      const { schema, document, operationName, variableValues, contextValue } = args as ExecutionArgs;
      const context = contextValue as OperationContext;
      const requested = estimatorOf(schema).estimate(document, operationName, variableValues);
      const cost: OperationCost = { requested, actual: 0 };
      const request = context.request;
      // Kept for the answer only when the request asks for it.
      if (request !== undefined && request.headers.get(COST_HEADER) === '1') {
        const known = costs.get(request);
        if (known) known.push(cost);
        else costs.set(request, [cost]);
      }
      if (requested > maxCalls)
        return setResultAndStopExecution({ errors: [tooExpensive(requested, maxCalls, 'per operation')] });
      const done = (client?: string) => ({
        onExecuteDone: ({ result }: { result: ExecutionResult | AsyncIterable<unknown> }) => {
          // A stream's calls go on after its first part: counted when it ends.
          if (Symbol.asyncIterator in result) return { onEnd: () => finish(cost, context, client) };
          finish(cost, context, client);
          return undefined;
        },
      });
      if (budget === undefined || requested === 0 || request === undefined) return done();
      if (requested > budget.perMinute)
        return setResultAndStopExecution({ errors: [tooExpensive(requested, budget.perMinute, 'per minute')] });
      const client = budget.clientOf(context, request.headers);
      const refused = (refusal: GraphQLError | undefined) =>
        refusal ? setResultAndStopExecution({ errors: [refusal] }) : done(client);
      // Only with Redis does this wait, for the budget's store.
      const charged = budget.charge(cost, client);
      return charged instanceof Promise ? charged.then(refused) : refused(charged);
    },
    onResultProcess(payload) {
      const { request, result } = payload;
      if (request.headers.get(COST_HEADER) !== '1') return undefined;
      const found = costs.get(request) ?? [];
      const answer = () => {
        if (Array.isArray(result))
          payload.setResult(result.map((one: ExecutionResult, index) => withCost(one, found[index])));
        else if (!(Symbol.asyncIterator in result)) payload.setResult(withCost(result as ExecutionResult, found[0]));
      };
      const refunds = found.flatMap((cost) => (cost.refunding ? [cost.refunding] : []));
      if (refunds.length === 0) return answer();
      return Promise.all(refunds).then(answer);
    },
  };
}
