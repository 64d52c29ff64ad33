/**
 * A bound on the upstream calls one GraphQL operation makes. Aliases, list arguments and
 * federation representations each multiply calls; the budget caps the product. A call over the
 * budget is not queued but refused at once with UPSTREAM_FANOUT_LIMIT on the field that needed
 * it (the fields served within the budget keep their data): queuing would hold a connection
 * slot and the caller's request open for work the caller should not have asked for in one
 * operation, and a refusal tells the caller exactly that.
 */
import { codedError } from '../errors.js';
import type { RequestScope } from '../observability/request-context.js';
import type { UpstreamClient } from '../upstream/http.js';

/** The upstream calls left to one operation. Create one per operation. */
export class UpstreamCallBudget {
  #used = 0;

  constructor(
    /** most upstream calls the operation may make (a retry is part of its call, not another). @default 200 */
    readonly maxCalls: number,
  ) {}

  /** the upstream calls the operation has made through the budget (those it refused not counted) */
  get made(): number {
    return Math.min(this.#used, this.maxCalls);
  }

  /**
   * A client that makes its calls within this budget, and refuses the ones beyond it; each call
   * is made for `scope` (the operation's request, for its log, metrics and spans) when given.
   */
  limit(client: UpstreamClient, scope?: RequestScope): UpstreamClient {
    return {
      service: client.service,
      close: () => client.close(),
      request: (call) => {
        this.#used += 1;
        if (this.#used > this.maxCalls) {
          return Promise.reject(
            codedError(
              'UPSTREAM_FANOUT_LIMIT',
              `This operation needs more than ${this.maxCalls} upstream calls; ask for fewer items per operation`,
            ),
          );
        }
        return client.request(scope ? { ...call, scope } : call);
      },
    };
  }
}
