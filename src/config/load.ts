/**
 * Loading: command-line flags (first), then environment variables, then defaults, read once into
 * one frozen, typed configuration and cross-checked at start. This is the only module that reads
 * `process.env`; a bad value stops the start with a message naming the setting.
 */
import { readFlags, flagName } from './command-line.js';
import { EMULATOR_SETTINGS, type EmulatorConfig } from './emulator.js';
import { ConfigError, type Setting, type SettingValues } from './parse.js';
import { SETTINGS, type Config, type SettingsAsSet, type UpstreamTimeouts } from './settings.js';

/** Settings → values: flags first, then the environment, then the default; empty counts as unset. */
function readSettings<T extends readonly Setting[]>(
  settings: T,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): SettingValues<T> {
  const flags = readFlags(settings, argv);
  const values: Record<string, unknown> = {};
  // NODE_ENV=production switches the settings that have a production default to it.
  const production =
    [flags['node-env'], env['NODE_ENV']].find((value) => typeof value === 'string' && value !== '') === 'production';
  for (const setting of settings) {
    const given = flags[flagName(setting.env).slice(2)];
    // An empty value (`PORT=` in an env file) means "not set", as it does for most tools.
    const fallback =
      production && setting.productionDefault !== undefined ? setting.productionDefault : setting.default;
    const raw =
      [typeof given === 'string' ? given : undefined, env[setting.env]].find(
        (value) => value !== undefined && value !== '',
      ) ?? fallback;
    if (raw !== undefined) values[setting.key] = setting.parse(raw, setting.env);
  }
  // Each value came from its own setting's parser, so each field has the type SettingValues gives it.
  return values as SettingValues<T>;
}

/**
 * Reads the settings of `npm run emulator`.
 * @throws ConfigError naming the bad setting
 */
export function loadEmulatorConfig(
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): EmulatorConfig {
  return Object.freeze(readSettings(EMULATOR_SETTINGS, argv, env));
}

/**
 * The settings as they were set, of each configuration loadConfig returned: its timeouts are resolved, so no longer say
 * which variables set them.
 */
const settingsAsSet = new WeakMap<Config, SettingsAsSet>();

/** The settings as they were set of a configuration loadConfig returned; undefined for any other (a copy). */
export function settingsAsSetOf(config: Config): SettingsAsSet | undefined {
  return settingsAsSet.get(config);
}

/**
 * Reads the configuration from command-line flags (first) and environment variables.
 * @throws ConfigError naming the bad setting
 */
export function loadConfig(
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): Config {
  const warnings: string[] = [];
  const set = retiredRead(graphiqlChecked(readSettings(SETTINGS, argv, env), argv, env), argv, env, warnings);
  checkUpstreams(set);
  checkUpstreamCache(set);
  const {
    upstreamTimeoutMs,
    upstreamConnectTimeoutMs,
    upstreamHeadersTimeoutMs,
    upstreamBodyTimeoutMs,
    petstoreTimeoutMs,
    petstoreConnectTimeoutMs,
    petstoreHeadersTimeoutMs,
    petstoreBodyTimeoutMs,
    plantsTimeoutMs,
    plantsConnectTimeoutMs,
    plantsHeadersTimeoutMs,
    plantsBodyTimeoutMs,
    ...settings
  } = set;
  // Each phase: the area's own setting, else the shared one, else the area's deadline.
  const area = (totalMs: number, connectMs = totalMs, headersMs = totalMs, bodyMs = totalMs): UpstreamTimeouts =>
    Object.freeze({ totalMs, connectMs, headersMs, bodyMs });
  const config: Config = Object.freeze({
    ...settings,
    upstreamTimeouts: Object.freeze({
      petstore: area(
        petstoreTimeoutMs ?? upstreamTimeoutMs,
        petstoreConnectTimeoutMs ?? upstreamConnectTimeoutMs,
        petstoreHeadersTimeoutMs ?? upstreamHeadersTimeoutMs,
        petstoreBodyTimeoutMs ?? upstreamBodyTimeoutMs,
      ),
      plants: area(
        plantsTimeoutMs ?? upstreamTimeoutMs,
        plantsConnectTimeoutMs ?? upstreamConnectTimeoutMs,
        plantsHeadersTimeoutMs ?? upstreamHeadersTimeoutMs,
        plantsBodyTimeoutMs ?? upstreamBodyTimeoutMs,
      ),
    }),
  });
  settingsAsSet.set(config, set);
  startWarnings.set(config, warnings);
  return config;
}

/** What the start should warn of, for each configuration loadConfig returned. */
const startWarnings = new WeakMap<Config, readonly string[]>();

/** The warnings of a configuration loadConfig returned (a retired setting read): the start logs each. */
export function warningsOf(config: Config): readonly string[] {
  return startWarnings.get(config) ?? [];
}

/** Whether the setting of variable `env` was given, as a flag or in the environment. */
function given(name: string, argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  const flag = flagName(name);
  return (env[name] ?? '') !== '' || argv.some((arg) => arg === flag || arg.startsWith(`${flag}=`));
}

/**
 * Settings a release documented and a later one retired: still read until the next major
 * release, each as the settings that replaced it say, with a warning naming them. A replacing
 * setting given itself wins.
 */
function retiredRead(set: SettingsAsSet, argv: readonly string[], env: NodeJS.ProcessEnv, warnings: string[]) {
  const failures = set.upstreamCircuitFailures;
  if (failures === undefined) return set;
  const replacing = failures === 0 ? 'UPSTREAM_CIRCUIT_FAILURE_RATE' : 'UPSTREAM_CIRCUIT_MIN_CALLS';
  const meant =
    failures === 0 ? 'UPSTREAM_CIRCUIT_FAILURE_RATE=0 (no breaker)' : `UPSTREAM_CIRCUIT_MIN_CALLS=${failures}`;
  const overridden = given(replacing, argv, env);
  warnings.push(
    'UPSTREAM_CIRCUIT_FAILURES is retired and will stop being read in 2.0.0: the circuit opens on a failure rate ' +
      'over a window (UPSTREAM_CIRCUIT_FAILURE_RATE, UPSTREAM_CIRCUIT_MIN_CALLS, UPSTREAM_CIRCUIT_WINDOW_MS). ' +
      (overridden ? `Its value is not used: ${replacing} is set.` : `Its value is read as ${meant}; set that instead.`),
  );
  if (overridden) return set;
  return failures === 0 ? { ...set, upstreamCircuitFailureRate: 0 } : { ...set, upstreamCircuitMinCalls: failures };
}

/**
 * GraphiQL sends documents as text, which trusted-documents mode refuses: with TRUSTED_DOCUMENTS
 * it is off, and asking for both is refused.
 */
function graphiqlChecked(set: SettingsAsSet, argv: readonly string[], env: NodeJS.ProcessEnv): SettingsAsSet {
  if (set.trustedDocuments === undefined || !set.graphiql) return set;
  const asked =
    (env['GRAPHIQL'] ?? '') !== '' || argv.some((arg) => arg === '--graphiql' || arg.startsWith('--graphiql='));
  if (asked)
    throw new ConfigError(
      'GRAPHIQL=true cannot be used with TRUSTED_DOCUMENTS: GraphiQL sends documents as text, which only ' +
        'the documents of the manifest may be; unset GRAPHIQL',
    );
  return { ...set, graphiql: false };
}

/**
 * Refuses the upstream cache in several worker processes without Redis: each worker would keep
 * its own answers, and a write through one would not drop what the others kept.
 */
function checkUpstreamCache(set: Pick<SettingsAsSet, 'upstreamCache' | 'workers' | 'redisUrl'>): void {
  if (!set.upstreamCache.enabled || set.redisUrl !== undefined || set.workers === 1) return;
  throw new ConfigError(
    `UPSTREAM_CACHE needs REDIS_URL when WORKERS is not 1 (it is ${String(set.workers)}): each worker would keep ` +
      'its own answers, and a write through one would not drop what the others kept; set REDIS_URL, or WORKERS=1',
  );
}

/**
 * Refuses a start without upstreams where demo data must not be served. Either URL may be set
 * alone: the gateway then serves that area, and the other's fields answer UPSTREAM_NOT_SERVED.
 */
function checkUpstreams(set: Pick<SettingsAsSet, 'emulator' | 'petstoreUrl' | 'plantsUrl' | 'nodeEnv'>): void {
  if (set.emulator === true) return;
  const neither = set.petstoreUrl === undefined && set.plantsUrl === undefined;
  if (neither && (set.emulator === false || set.nodeEnv === 'production')) {
    // Demo data must never be served by a production deployment that forgot its upstreams.
    const when = set.emulator === false ? 'when EMULATOR=false' : 'when NODE_ENV=production';
    throw new ConfigError(
      `PETSTORE_URL, PLANTS_URL or both must be set ${when} ` +
        "(or set EMULATOR=true to serve the embedded emulator's demo data)",
    );
  }
}
