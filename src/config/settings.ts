/**
 * The settings table: every group of settings (one file each), in the order `--help`, the start-up
 * banner and docs/configuration.md list them, and the {@link Config} it types. Each setting is
 * described once, in its group: its field, variable (and so flag), parser, default and meaning.
 */
import type { UpstreamService } from '../upstream/failure.js';
import type { UpstreamClientOptions } from '../upstream/http.js';
import { CACHE_SETTINGS } from './cache.js';
import { DEVELOPMENT_SETTINGS } from './development.js';
import { LIMIT_SETTINGS } from './limits.js';
import { LIVE_QUERY_SETTINGS } from './live-queries.js';
import { MCP_SETTINGS } from './mcp.js';
import { OBSERVABILITY_SETTINGS } from './observability.js';
import type { Setting, SettingValues } from './parse.js';
import { SCALING_SETTINGS } from './scaling.js';
import { SECURITY_SETTINGS } from './security.js';
import { SERVER_SETTINGS } from './server.js';
import { UPSTREAM_SAFETY_SETTINGS } from './upstream-safety.js';
import { UPSTREAM_TIMEOUT_SETTINGS } from './upstream-timeouts.js';
import { UPSTREAM_SETTINGS } from './upstream.js';

/** Settings that belong together, under one heading of docs/configuration.md. */
type SettingGroup = Readonly<{ title: string; settings: readonly Setting[] }>;

/** The groups of settings, in order: where a newcomer looks for a setting. */
export const SETTING_GROUPS = [
  { title: 'Server', settings: SERVER_SETTINGS },
  { title: 'Upstreams', settings: UPSTREAM_SETTINGS },
  { title: 'Upstream timeouts', settings: UPSTREAM_TIMEOUT_SETTINGS },
  { title: 'Upstream safety', settings: UPSTREAM_SAFETY_SETTINGS },
  { title: 'Caches', settings: CACHE_SETTINGS },
  { title: 'Limits', settings: LIMIT_SETTINGS },
  { title: 'Security', settings: SECURITY_SETTINGS },
  { title: 'Development and production', settings: DEVELOPMENT_SETTINGS },
  { title: 'Observability', settings: OBSERVABILITY_SETTINGS },
  { title: 'Workers and Redis', settings: SCALING_SETTINGS },
  { title: 'Live queries', settings: LIVE_QUERY_SETTINGS },
  { title: 'MCP (AI agents)', settings: MCP_SETTINGS },
] as const satisfies readonly SettingGroup[];

/** One entry of the table, of whichever group. */
type GatewaySetting = (typeof SETTING_GROUPS)[number]['settings'][number];

/**
 * Every setting of the gateway, group after group (also the source of `--help` and of {@link Config}).
 */
export const SETTINGS: readonly GatewaySetting[] = SETTING_GROUPS.flatMap(
  (group): readonly GatewaySetting[] => group.settings,
);

/** The values of the gateway's settings as they were set, or defaulted: one field per entry of {@link SETTINGS}. */
export type SettingsAsSet = SettingValues<typeof SETTINGS>;

/**
 * The twelve timeout settings (a deadline and three phases, shared and per area): {@link Config} has
 * them resolved, one object per area.
 */
type TimeoutKey = `${'upstream' | UpstreamService}${'' | 'Connect' | 'Headers' | 'Body'}TimeoutMs`;

/** The timeouts of one upstream area, in milliseconds, each resolved to the value that applies. */
export type UpstreamTimeouts = UpstreamClientOptions['timeouts'];

/**
 * The gateway's configuration. One field per entry of {@link SETTINGS}, named by its `key` and
 * typed by its parser (its variable, flag, default and meaning are in that entry, in `--help` and
 * in docs/configuration.md), except the twelve timeout settings, which come resolved, one object
 * per upstream area.
 */
export type Config = Readonly<
  Omit<SettingsAsSet, TimeoutKey> & {
    /**
     * Each area's timeouts. Each comes from the area's own setting (`PETSTORE_HEADERS_TIMEOUT_MS`),
     * else the shared one (`UPSTREAM_HEADERS_TIMEOUT_MS`), else the area's call deadline
     * (`PETSTORE_TIMEOUT_MS`, else `UPSTREAM_TIMEOUT_MS`): with only `UPSTREAM_TIMEOUT_MS` set, it
     * bounds every phase, as it did before the phases could be set apart.
     * @default every timeout of both areas is UPSTREAM_TIMEOUT_MS's default
     */
    upstreamTimeouts: Readonly<Record<UpstreamService, UpstreamTimeouts>>;
  }
>;
