/**
 * Pieces of the start-up banner: the settings changed from their defaults, and URLs shown without
 * their credentials.
 */
import { settingsAsSetOf } from './load.js';
import type { UpstreamCacheSetting } from './parse.js';
import { SETTINGS, type Config } from './settings.js';

/**
 * The settings whose value differs from the default, for the start-up banner (URLs shown without
 * credentials), in the order of {@link SETTINGS}.
 * @param config a configuration loadConfig returned (a copy does not say which timeout settings were set)
 */
export function changedSettings(config: Config): string[] {
  const set = settingsAsSetOf(config);
  if (set === undefined) throw new TypeError('changedSettings needs the configuration loadConfig returned, not a copy');
  return SETTINGS.flatMap((setting) => {
    const value = set[setting.key];
    const defaultText =
      set.nodeEnv === 'production' && 'productionDefault' in setting ? setting.productionDefault : setting.default;
    const defaultValue = defaultText === undefined ? undefined : setting.parse(defaultText, setting.env);
    if (value === defaultValue || (isUpstreamCache(value) && !value.enabled && defaultText === 'off')) return [];
    const shown =
      typeof value === 'string' && setting.key.endsWith('Url')
        ? redactUrl(value)
        : isUpstreamCache(value)
          ? upstreamCacheText(value)
          : String(value);
    return [`${setting.env}=${shown}`];
  });
}

function isUpstreamCache(value: unknown): value is UpstreamCacheSetting {
  return typeof value === 'object' && value !== null && 'enabled' in value && 'defaults' in value;
}

/** UPSTREAM_CACHE as it could be written: `off`, `on`, or its defaults (`getPetById:30s`). */
function upstreamCacheText(value: UpstreamCacheSetting): string {
  const defaults = Object.entries(value.defaults).map(([operation, seconds]) => `${operation}:${seconds}s`);
  return !value.enabled ? 'off' : defaults.length === 0 ? 'on' : defaults.join(',');
}

/** A URL without user info, safe to print. */
export function redactUrl(value: string): string {
  const parsed = new URL(value);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString().replace(/\/+$/, '');
}
