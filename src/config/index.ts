/**
 * Configuration: environment variables and the equivalent command-line flags, read once into one
 * frozen, typed object and validated at start (the only reader of `process.env`). What the rest of
 * the code imports; where each part lives:
 *
 * - `settings.ts`: the table of every setting, group by group (`server.ts`, `upstream.ts`,
 *   `upstream-timeouts.ts`, `upstream-safety.ts`, `cache.ts`, `limits.ts`, `security.ts`,
 *   `development.ts`, `observability.ts`, `scaling.ts`, `live-queries.ts`), and the `Config` it types;
 *   `emulator.ts`: the emulator's own two
 * - `parse.ts`: what a setting is, and the parsers that check its value
 * - `load.ts`: flags, then environment, then defaults; the cross-checks; retired settings
 * - `command-line.ts`: flags, `--help`, `--print-schema`, "did you mean"
 * - `banner.ts`: the settings changed from their defaults, URLs without credentials
 * - `grouped.ts`: the settings as the parts of the gateway take them (an upstream client, Redis)
 */
export { changedSettings, redactUrl } from './banner.js';
export { closestName, flagName, helpText, startCommand } from './command-line.js';
export { EMULATOR_SETTINGS } from './emulator.js';
export { redisSettings, upstreamClientSettings } from './grouped.js';
export { loadConfig, loadEmulatorConfig, warningsOf } from './load.js';
export { ConfigError, type UpstreamCacheSetting } from './parse.js';
export { SETTING_GROUPS, SETTINGS, type Config } from './settings.js';
