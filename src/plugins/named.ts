/**
 * A yoga plugin as the gateway installs it: under a name. The assembly (src/gateway.ts,
 * src/security/index.ts) names each plugin it gives yoga, and the HTTP front looks each name up
 * in its own table of how it serves the plugins' request hooks (src/http/plugin-table.ts). A
 * plugin itself knows neither its name nor the front.
 */
import type { Plugin } from 'graphql-yoga';

/** A plugin and the name it is installed under. */
export type NamedPlugin = { readonly name: string; readonly plugin: Plugin };

/** `plugins` (one, or the several one job installs) under `name`, in their order. */
export function named(name: string, plugins: Plugin | readonly Plugin[]): NamedPlugin[] {
  return (Array.isArray(plugins) ? plugins : [plugins]).map((plugin: Plugin) => ({ name, plugin }));
}
