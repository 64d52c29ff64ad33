/**
 * The front's table of plugins: how the HTTP front (src/http/lane.ts) serves the request hooks of
 * each plugin yoga runs, and what each of yoga's options asks of a request. It is the one place
 * the front's knowledge of the plugins lives: the plugins know nothing of the front.
 *
 * The front runs yoga's envelop (every plugin's onParse, onValidate, onContextBuilding and
 * onExecute) but not yoga's request hooks: those take a Fetch `Request` and `Response`, whose
 * making cost more than the rest of a cheap request (bench/PROFILE.md). So for each request hook
 * a row says how the front does its work instead, with the same code (the same rate limiter, the
 * same CORS function, the same compression), which requests it leaves to yoga, or that the front
 * calls the hook itself ({@link THE_LANE_CALLS_IT}).
 *
 * At start, {@link readPluginTable} checks the table against what yoga runs: the gateway's plugins,
 * by the name the assembly installs each under (src/gateway.ts, src/security/index.ts), yoga's own
 * plugins, which createYoga adds from its options, and those options. A plugin without a row, a
 * request hook its row does not cover, a plugin of yoga's that the table does not expect, or an
 * option the front does not serve keeps every request on yoga (`Gateway.yogaOnly` says why) until
 * a row here says how the front does the work. Nothing is looked up per request.
 * test/http-differential.test.ts checks that both paths answer alike.
 */
import type { CORSOptions } from '@whatwg-node/server';
import type { GraphQLError } from 'graphql';
import type { Plugin, YogaServerOptions } from 'graphql-yoga';
import type { GraphQLContext } from '../context.js';
import type { NamedPlugin } from '../plugins/named.js';

/** yoga's request hooks (and whatwg-node's), which the front does not run through yoga. */
const REQUEST_HOOKS = [
  'onRequest',
  'onRequestParse',
  'onParams',
  'onExecutionResult',
  'onResultProcess',
  'onResponse',
  'instrumentation',
] as const;

type RequestHook = (typeof REQUEST_HOOKS)[number];

/**
 * The row of an `onParams` or `onResultProcess` hook the front calls itself, in the plugins'
 * order, as yoga would: with the parameters or the result, a request whose method, URL and
 * headers are node's (`headers.get` only), the operation's initial context, and `setParams` or
 * `setResult`. Not `setParamsHandler` nor `setResultProcessor`: a hook that needs them must
 * leave its requests to yoga. The response cache's lookup, the redaction of secrets and the
 * observer's record are such hooks.
 */
const THE_LANE_CALLS_IT = 'the lane calls it';

/** For each request hook of a plugin: how the front does its work instead, or {@link THE_LANE_CALLS_IT}. */
type Row = Partial<Record<RequestHook, string>>;

/**
 * The gateway's plugins, by the name the assembly installs each under, in the order it installs
 * them. A plugin with no request hook has an empty row: the front runs its envelop hooks as yoga
 * does.
 */
const GATEWAY_PLUGINS: Readonly<Record<string, Row>> = {
  'graphql-context': {},
  'entry-pages': {
    onRequest: 'the lane serves the GraphQL endpoint only; `/` goes to yoga',
    onRequestParse: 'a request whose Accept names no JSON type (a browser) goes to yoga',
    onResultProcess: 'the lane answers only clients that accept JSON, as this hook makes every error JSON',
  },
  mcp: { onRequest: 'the lane serves the GraphQL endpoint only; /mcp and its metadata document go to yoga' },
  uploads: {
    onRequestParse: 'a multipart request goes to yoga (the lane reads application/json bodies only)',
    onResponse: 'idem: only uploads have files to remove',
  },
  'rate-limit': {
    onRequestParse:
      'the lane makes the same check (Security.rateLimiter) before it reads the body, ' +
      'and marks the requests it hands on as checked (RATE_LIMIT_CHECKED)',
  },
  'csrf-prevention': {
    onRequestParse:
      'the lane serves JSON POSTs, which need no header, and GETs carrying one of CSRF_HEADERS; ' +
      'any other request goes to yoga',
  },
  'request-body-limits': {
    onRequest: 'the lane reads the Content-Type through the same canonicalMediaType',
    onRequestParse:
      'a body over the limit (declared or read) or not UTF-8 goes to yoga, which refuses it here: ' +
      'the lane judges it with declaredLength and bodyText',
  },
  'trusted-documents': {
    onParams:
      'the lane serves a request that names a document of the same manifest by hash (trustedDocument), ' +
      'with its text; a document text, a missing or an unknown hash go to yoga, which refuses them',
  },
  'query-limits': {},
  'input-depth': {
    onParams: 'variables nested deeper than the limit (valueNestsDeeper) go to yoga; the lane takes no extensions',
  },
  'demand-control': { onResultProcess: THE_LANE_CALLS_IT },
  'variable-error-code': { onResultProcess: THE_LANE_CALLS_IT },
  'secret-redaction': { onResultProcess: THE_LANE_CALLS_IT },
  'incremental-delivery': { onResultProcess: THE_LANE_CALLS_IT },
  'persisted-queries': { onParams: 'a request with extensions (a persisted query hash) goes to yoga' },
  'response-cache': {
    onRequest: 'a request with If-None-Match goes to yoga, whose plugin may answer it 304',
    onParams: THE_LANE_CALLS_IT,
  },
  graphiql: { onResponse: 'the page goes to browsers, which the lane leaves to yoga (an Accept that names HTML)' },
  compression: { onResponse: 'the lane compresses with the same encodeAnswer and RESPONSE_COMPRESSION_MIN_BYTES' },
  explain: { onResultProcess: THE_LANE_CALLS_IT },
  'upstream-cache-notice': { onResultProcess: THE_LANE_CALLS_IT },
  observability: {
    instrumentation: 'the lane begins the request and its operation with the same RequestObserver',
    onParams: THE_LANE_CALLS_IT,
    onResultProcess: THE_LANE_CALLS_IT,
    onResponse: 'the lane sends the request id (setRequestId) and gives the observer its status (responseReady)',
  },
  'live-queries': {},
  'operations-endpoints': {
    onRequest: 'the lane serves the GraphQL endpoint only; /metrics and /readiness go to yoga',
  },
};

/** The options yoga is created with, as the front reads them. */
export type YogaOptions = YogaServerOptions<Record<string, unknown>, GraphQLContext>;

/**
 * yoga's own plugins that have request hooks, in the order createYoga installs them (graphql-yoga's
 * `src/server.ts`; the gateway's plugins come between the result processors and the batching
 * limit), each when its option installs it.
 */
const YOGA_PLUGINS: readonly { plugin: string; when?: (options: YogaOptions) => boolean; hooks: Row }[] = [
  { plugin: 'useHealthCheck', hooks: { onRequest: 'the lane serves the GraphQL endpoint only; /health goes to yoga' } },
  {
    plugin: 'useCORS',
    when: (options) => options.cors !== false,
    hooks: {
      onRequest: 'a preflight (OPTIONS) goes to yoga',
      onResponse: 'the lane sends the headers of the same cors option, from the same getCORSHeadersByRequestAndOptions',
    },
  },
  {
    plugin: 'useGraphiQL',
    when: (options) => options.graphiql !== false,
    hooks: { onRequest: 'a request whose Accept names HTML (a browser) goes to yoga' },
  },
  { plugin: 'GET parser', hooks: { onRequestParse: "the lane reads a GET's query string as it does (queryParams)" } },
  {
    plugin: 'JSON parser',
    hooks: { onRequestParse: 'the lane reads an application/json body; one that is not JSON goes to yoga' },
  },
  {
    plugin: 'multipart parser',
    when: (options) => options.multipart !== false,
    hooks: { onRequestParse: 'a multipart request goes to yoga' },
  },
  { plugin: 'GraphQL parser', hooks: { onRequestParse: 'an application/graphql body goes to yoga' } },
  { plugin: 'form parser', hooks: { onRequestParse: 'a form body goes to yoga' } },
  {
    plugin: 'useResultProcessors',
    hooks: {
      onResultProcess:
        'the lane answers JSON as the regular processor does for an Accept that picks it (acceptedMediaType, ' +
        'result.ts); streams and other media types go to yoga',
    },
  },
  { plugin: 'useLimitBatching', hooks: { onRequestParse: 'a batch (a JSON array) goes to yoga' } },
  {
    plugin: 'useCheckGraphQLQueryParams',
    hooks: { onParams: 'the lane takes the same parameters, of the same types (laneParams); any other goes to yoga' },
  },
  { plugin: 'useUnhandledRoute', hooks: { onRequest: 'the lane serves the GraphQL endpoint only' } },
  { plugin: 'useCheckMethodForGraphQL', hooks: { onRequestParse: 'the lane serves GET and POST only' } },
];

/**
 * yoga's options, by name: how the front serves what each asks of a request; or, for one it serves
 * with some values only, a check of the value (set or not) that says how, or undefined when the
 * front does not serve it. An option set without a row keeps every request on yoga.
 */
const YOGA_OPTIONS: Readonly<Record<string, string | ((value: unknown) => string | undefined)>> = {
  schema: 'the lane runs the same schema, through yoga.getEnveloped',
  plugins: 'each is named and has its row (GATEWAY_PLUGINS)',
  logging: 'the lane logs the failures it masks to the same log',
  maskedErrors: (value) =>
    maskErrorOf(value) === undefined
      ? undefined
      : 'the lane masks a failure outside execution with the same maskError; errors of execution are masked in envelop',
  parserAndValidationCache: 'the lane parses and validates through envelop, with the same cache',
  cors: (value) =>
    value === false || (typeof value === 'object' && value !== null)
      ? 'the lane sends the headers of the same options (see useCORS)'
      : undefined,
  graphiql: 'GraphiQL is for browsers, whose requests go to yoga (see useGraphiQL)',
  renderGraphiQL: 'idem',
  batching: 'a batch (a JSON array) goes to yoga',
  maxRequestBodySize: (value) =>
    value === false ? "off: the gateway's own limit replaces it (request-body-limits)" : undefined,
  multipart: 'a multipart request goes to yoga',
  landingPage: 'the lane serves the GraphQL endpoint only',
  graphqlEndpoint: 'the lane serves yoga.graphqlEndpoint',
  healthCheckEndpoint: 'the lane serves the GraphQL endpoint only',
  extraParamNames: 'a request with a parameter the lane does not take goes to yoga (laneParams)',
  context: "the lane builds the context with yoga's context factory",
};

/** What the front serves with, read from the table once, at start. */
export type PluginTable = {
  /**
   * why yoga serves every request: each plugin, request hook or option the table does not cover;
   * empty, the front serves plain GraphQL requests
   */
  yogaOnly: readonly string[];
  /** the `onParams` hooks the front calls ({@link THE_LANE_CALLS_IT}), in the plugins' order */
  paramsHooks: NonNullable<Plugin['onParams']>[];
  /** the `onResultProcess` hooks the front calls, in the plugins' order */
  resultHooks: NonNullable<Plugin['onResultProcess']>[];
  /** the CSRF prevention plugin is installed: the front serves only GETs that carry one of its headers */
  csrfPrevention: boolean;
};

/**
 * Reads the table for the gateway's `plugins` (as the assembly named them), the `options` yoga was
 * created with, and the plugins yoga runs (`yogaPlugins`, its own ones included).
 */
export function readPluginTable(
  plugins: readonly NamedPlugin[],
  options: YogaOptions,
  yogaPlugins: readonly unknown[] | undefined,
): PluginTable {
  const yogaOnly = [...unservedHooks(plugins), ...unservedOptions(plugins, options)];
  yogaOnly.push(
    ...(yogaPlugins === undefined ? ["yoga's plugins cannot be read"] : unknownPlugins(plugins, options, yogaPlugins)),
  );
  return {
    yogaOnly,
    paramsHooks: hooksTheLaneCalls(plugins, 'onParams'),
    resultHooks: hooksTheLaneCalls(plugins, 'onResultProcess'),
    csrfPrevention: plugins.some(({ name }) => name === 'csrf-prevention'),
  };
}

/** The row of `key` in `table`: its own, never one an object inherits (`constructor`). */
function rowOf<R>(table: Readonly<Record<string, R>>, key: string): R | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** The request hooks `plugin` has. */
function requestHooksOf(plugin: object): RequestHook[] {
  return REQUEST_HOOKS.filter((hook) => (plugin as Record<string, unknown>)[hook] !== undefined);
}

/** Each of the gateway's plugins without a row, and each request hook its row does not cover. */
function unservedHooks(plugins: readonly NamedPlugin[]): string[] {
  return plugins.flatMap(({ name, plugin }) => {
    const row = rowOf(GATEWAY_PLUGINS, name);
    if (row === undefined) return [`plugin ${name}: no row in the front's table`];
    return requestHooksOf(plugin).flatMap((hook) => (row[hook] === undefined ? [`plugin ${name} ${hook}`] : []));
  });
}

/** Each option yoga was given that the front does not serve, and plugins it was given that are not named. */
function unservedOptions(plugins: readonly NamedPlugin[], options: YogaOptions): string[] {
  const unserved: string[] = [];
  const given = options as Record<string, unknown>;
  for (const [option, row] of Object.entries(YOGA_OPTIONS))
    if (typeof row === 'function' && row(given[option]) === undefined) unserved.push(`option ${option}`);
  for (const [option, value] of Object.entries(given))
    if (value !== undefined && rowOf(YOGA_OPTIONS, option) === undefined) unserved.push(`option ${option}`);
  const named = plugins.map(({ plugin }) => plugin);
  const installed = options.plugins ?? [];
  if (installed.length !== named.length || installed.some((plugin, index) => plugin !== named[index]))
    unserved.push('option plugins: not the plugins named for the front');
  return unserved;
}

/**
 * Each plugin yoga runs with request hooks that is neither one of the gateway's nor, in its
 * place, one of yoga's own the table expects; and each of those it expects but yoga does not run.
 * (A plugin a plugin adds in `onPluginInit` is such an unknown one.)
 */
function unknownPlugins(
  plugins: readonly NamedPlugin[],
  options: YogaOptions,
  yogaPlugins: readonly unknown[],
): string[] {
  const gateway = new Set<unknown>(plugins.map(({ plugin }) => plugin));
  const expected = YOGA_PLUGINS.filter(({ when }) => when?.(options) ?? true);
  const unknown: string[] = [];
  let next = 0;
  for (const plugin of yogaPlugins) {
    if (typeof plugin !== 'object' || plugin === null || gateway.has(plugin)) continue;
    const hooks = requestHooksOf(plugin);
    if (hooks.length === 0) continue;
    const row = expected[next];
    if (row !== undefined && sameHooks(row.hooks, hooks)) next++;
    else unknown.push(`a plugin of yoga's with ${hooks.join(', ')}, where the table expects ${row?.plugin ?? 'none'}`);
  }
  for (const row of expected.slice(next))
    unknown.push(`yoga's ${row.plugin}, which the table expects, is not installed`);
  return unknown;
}

function sameHooks(row: Row, hooks: readonly RequestHook[]): boolean {
  const covered = Object.keys(row);
  return covered.length === hooks.length && hooks.every((hook) => row[hook] !== undefined);
}

/** The `hook`s of `plugins` the front calls itself ({@link THE_LANE_CALLS_IT}), in the plugins' order. */
function hooksTheLaneCalls<K extends 'onParams' | 'onResultProcess'>(
  plugins: readonly NamedPlugin[],
  hook: K,
): NonNullable<Plugin[K]>[] {
  return plugins.flatMap(({ name, plugin }) => {
    const called = plugin[hook];
    return called !== undefined && rowOf(GATEWAY_PLUGINS, name)?.[hook] === THE_LANE_CALLS_IT ? [called] : [];
  });
}

/** The function yoga's `maskedErrors` option masks with, when it gives one. */
function maskErrorOf(value: unknown): ((error: unknown, message: string) => GraphQLError) | undefined {
  const maskError: unknown = typeof value === 'object' && value !== null ? Reflect.get(value, 'maskError') : undefined;
  return typeof maskError === 'function' ? (maskError as (error: unknown, message: string) => GraphQLError) : undefined;
}

/**
 * What the front masks and sends CORS headers with: the same `maskedErrors.maskError` and `cors`
 * yoga was given. Read once the table is read: when it does not serve them, yoga serves every
 * request and these are never used.
 */
export function servedOptions(options: YogaOptions): {
  maskError: (error: unknown, message: string) => GraphQLError;
  cors: CORSOptions;
} {
  const maskError = maskErrorOf(options.maskedErrors) ?? unservedMask;
  const { cors } = options;
  return { maskError, cors: typeof cors === 'object' && cors !== null ? cors : false };
}

function unservedMask(): never {
  throw new Error("the lane masks only with the maskError of yoga's maskedErrors option");
}

/** The plugins yoga runs, its own included, in their order; undefined when they cannot be read. */
export function pluginsOf(yoga: object): readonly unknown[] | undefined {
  // A protected member of yoga's server, read once at start (not part of yoga's public types).
  const plugins: unknown = Reflect.get(yoga, 'plugins');
  return Array.isArray(plugins) ? plugins : undefined;
}
