/**
 * The request hooks of yoga's the HTTP front calls itself: the `onParams` and `onResultProcess`
 * hooks its table says it calls (`THE_LANE_CALLS_IT`, src/http/plugin-table.ts), in the plugins'
 * order, as yoga calls them. So the response cache's lookup, the redaction of secrets, the code of
 * variable errors, the masking of streamed parts and the observer's record each have one home:
 * their plugin.
 */
import type { ExecutionResult } from 'graphql';
import type { GraphQLParams, Plugin, YogaServerInstance } from 'graphql-yoga';
import type { GraphQLContext } from '../context.js';
import type { LaneContext, Params } from './request.js';

type Yoga = YogaServerInstance<Record<string, unknown>, GraphQLContext>;

/** The hooks the front calls, with what yoga gives them. */
export class CalledHooks {
  readonly #params: readonly NonNullable<Plugin['onParams']>[];
  readonly #results: readonly NonNullable<Plugin['onResultProcess']>[];
  // yoga's members the hooks are given, read once: each read goes through its adapter's Proxy.
  readonly #fetchAPI: Yoga['fetchAPI'];
  readonly #handleParams: Yoga['handleParams'];

  constructor(
    yoga: Yoga,
    hooks: {
      params: readonly NonNullable<Plugin['onParams']>[];
      results: readonly NonNullable<Plugin['onResultProcess']>[];
    },
  ) {
    this.#params = hooks.params;
    this.#results = hooks.results;
    this.#fetchAPI = yoga.fetchAPI;
    this.#handleParams = yoga.handleParams;
  }

  /**
   * Calls the `onParams` hooks: each may change the parameters (`context.params`) or set the result
   * (a cached answer), which is returned.
   */
  params(
    context: LaneContext,
    start = 0,
    found?: ExecutionResult,
  ): ExecutionResult | undefined | Promise<ExecutionResult | undefined> {
    let result = found;
    const hooks = this.#params;
    // One payload for the hooks of this request, read afresh by each (yoga makes one per hook).
    const payload: Parameters<NonNullable<Plugin['onParams']>>[0] = {
      // JSON's null operationName as yoga's parser leaves it; the type says undefined.
      params: context.params as GraphQLParams,
      request: context.request,
      context,
      fetchAPI: this.#fetchAPI,
      paramsHandler: this.#handleParams,
      setParams: (params) => void ((payload.params = params), (context.params = params as Params)),
      setParamsHandler: refuseParamsHandler,
      setResult: (value) => void (result = value as ExecutionResult),
    };
    for (let index = start; index < hooks.length; index++) {
      const done = hooks[index]?.(payload);
      if (done instanceof Promise) return done.then(() => this.params(context, index + 1, result));
    }
    return result;
  }

  /**
   * Calls the `onResultProcess` hooks: each may replace the result (codes, redaction), and the
   * observer records it.
   */
  results(context: LaneContext, executed: ExecutionResult, start = 0): ExecutionResult | Promise<ExecutionResult> {
    const hooks = this.#results;
    // One payload for the hooks of this request, as for the parameters' hooks.
    const payload: Parameters<NonNullable<Plugin['onResultProcess']>>[0] = {
      request: context.request,
      result: executed,
      setResult: (value) => void (payload.result = value),
      resultProcessor: undefined,
      setResultProcessor: refuseResultProcessor,
      acceptableMediaTypes: NO_MEDIA_TYPES,
      serverContext: context,
    };
    for (let index = start; index < hooks.length; index++) {
      const done = hooks[index]?.(payload);
      if (done instanceof Promise)
        return done.then(() => this.results(context, payload.result as ExecutionResult, index + 1));
    }
    return payload.result as ExecutionResult;
  }
}

/** What a hook the front calls may not do (THE_LANE_CALLS_IT): such a hook leaves its requests to yoga. */
function refuseParamsHandler(): never {
  throw new Error('a plugin whose onParams the lane calls may not replace the params handler');
}
function refuseResultProcessor(): never {
  throw new Error('a plugin whose onResultProcess the lane calls may not choose the result processor');
}
const NO_MEDIA_TYPES: string[] = [];
