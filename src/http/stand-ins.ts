/**
 * Which requests the HTTP lane may serve, derived from the plugins' hooks.
 *
 * The lane runs yoga's envelop (every plugin's onParse, onValidate, onContextBuilding and
 * onExecute) but not yoga's request hooks: those take a Fetch `Request` and `Response`, whose
 * making cost more than the rest of a cheap request (bench/PROFILE.md). So each request hook of a
 * gateway plugin is either stood in for by the lane, with the same code, in the way the plugin's
 * mark says ({@link laneStandsIn}), or the plugin keeps every request on yoga's path. A plugin
 * added with a request hook, or a hook added to a plugin, sends every request to yoga until
 * someone says how the lane does its work; the differential test (test/http-differential.test.ts)
 * checks that the two paths answer alike.
 */

import type { Plugin } from 'graphql-yoga';

/** yoga's request hooks (and whatwg-node's), which the lane does not call. */
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
 * For each request hook of a plugin, how the lane does its work instead, or
 * {@link THE_LANE_CALLS_IT}.
 */
export type StandIn = Partial<Record<RequestHook, string>>;

/**
 * The mark of an `onParams` or `onResultProcess` hook the lane calls itself, in the plugins'
 * order, as yoga would: with the parameters or the result, a request whose method, URL and
 * headers are node's (`headers.get` only), the operation's initial context, and `setParams` or
 * `setResult`. Not `setParamsHandler` nor `setResultProcessor`: a hook that needs them must
 * leave its requests to yoga. The response cache's lookup, the redaction of secrets and the
 * observer's record are such hooks.
 */
export const THE_LANE_CALLS_IT = 'the lane calls it';

const STAND_IN = Symbol('how the HTTP lane stands in for this plugin');

/**
 * Marks `plugin`: for each of its request hooks, `how` says what the lane does in its place (with
 * the same code: the same rate limiter, the same redaction), or which requests it leaves to yoga.
 * Returns the plugin.
 */
export function laneStandsIn<P extends object>(plugin: P, how: StandIn): P {
  Object.defineProperty(plugin, STAND_IN, { value: how, enumerable: false });
  return plugin;
}

/** The `hook`s of `plugins` the lane calls itself ({@link THE_LANE_CALLS_IT}), in the plugins' order. */
export function hooksTheLaneCalls<K extends 'onParams' | 'onResultProcess'>(
  plugins: readonly Plugin[],
  hook: K,
): NonNullable<Plugin[K]>[] {
  return plugins.flatMap((plugin) => {
    const called = plugin[hook];
    return called !== undefined && (plugin as { [STAND_IN]?: StandIn })[STAND_IN]?.[hook] === THE_LANE_CALLS_IT
      ? [called]
      : [];
  });
}

/**
 * The request hooks of `plugins` the lane does not stand in for, as `plugin-index.hook`: while
 * there is one, yoga serves every request.
 */
export function hooksOnlyYogaRuns(plugins: readonly object[]): string[] {
  const unserved: string[] = [];
  plugins.forEach((plugin, index) => {
    const how = (plugin as { [STAND_IN]?: StandIn })[STAND_IN] ?? {};
    for (const hook of REQUEST_HOOKS)
      if ((plugin as Record<string, unknown>)[hook] !== undefined && how[hook] === undefined)
        unserved.push(`plugin ${index} ${hook}`);
  });
  return unserved;
}
