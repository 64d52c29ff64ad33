/**
 * Settings of the MCP endpoint (`/mcp`, for AI agents): on or off, which operations are its tools,
 * which mutations among them an agent may call.
 */
import { ConfigError, flag, url, type Setting } from './parse.js';

/** No mutation: one value, so that the default compares equal to itself (the start-up banner's changed settings). */
const NONE: readonly string[] = Object.freeze([]);

/** `none`, `all`, or a comma-separated list of operation names. */
const mutationNames = (raw: string, env: string): readonly string[] | 'all' => {
  const value = raw.trim();
  if (value.toLowerCase() === 'all') return 'all';
  if (value.toLowerCase() === 'none' || value === '') return NONE;
  const names = value.split(',').map((name) => name.trim());
  for (const name of names)
    if (!/^[_A-Za-z][_0-9A-Za-z]*$/.test(name))
      throw new ConfigError(`${env} must be none, all or a comma-separated list of operation names, got "${name}"`);
  return Object.freeze(names);
};

/** A comma-separated list of http(s) URLs (each an OAuth authorization server's issuer). */
const urls = (raw: string, env: string): readonly string[] =>
  Object.freeze(
    raw
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '')
      .map((item) => url(item, env)),
  );

/** The Model Context Protocol endpoint. */
export const MCP_SETTINGS = [
  {
    key: 'mcp',
    env: 'MCP',
    default: 'false',
    description:
      'serve the Model Context Protocol at /mcp: chosen GraphQL operations as tools for AI agents; true or false',
    details:
      'serve the Model Context Protocol at `/mcp`: the operations of `MCP_OPERATIONS` become tools an AI ' +
      'agent calls with its own credentials; off by default, as it opens a second way in. See [MCP](mcp.md)',
    parse: flag,
  },
  {
    key: 'mcpOperations',
    env: 'MCP_OPERATIONS',
    default: undefined,
    description: 'folder of .graphql files whose named operations are the MCP tools; unset: schema/mcp/ as shipped',
    details:
      'folder of `.graphql` files whose named operations are the MCP tools; unset: the ones shipped in ' +
      '`schema/mcp/`',
    parse: (raw: string) => raw,
  },
  {
    key: 'mcpMutations',
    env: 'MCP_MUTATIONS',
    default: 'none',
    description: 'the mutations of MCP_OPERATIONS that become tools: none, all, or their names (comma-separated)',
    details:
      'mutations of `MCP_OPERATIONS` that become tools: `none`, `all`, or their names (`AddPet`); queries ' +
      'always are',
    parse: mutationNames,
  },
  {
    key: 'mcpAuthorizationServers',
    env: 'MCP_AUTHORIZATION_SERVERS',
    default: undefined,
    description:
      "OAuth authorization servers (issuer URLs, comma-separated) where agents get a bearer token, named in /mcp's " +
      'protected resource metadata (RFC 9728); unset: none',
    details:
      'OAuth issuer URLs (comma separated) where an agent gets a token, named in the resource metadata and a ' +
      '401 to `/mcp` without a credential; unset: neither',
    parse: urls,
  },
] as const satisfies readonly Setting[];
