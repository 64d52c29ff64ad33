/**
 * The MCP endpoint (MCP=true): `POST /mcp`, the Model Context Protocol's Streamable HTTP
 * transport on the gateway's own port, served by the official SDK in its stateless mode: each
 * POST gets a fresh server and transport, answers in JSON, and keeps nothing, so any replica can
 * serve any message and a load balancer needs no sticky sessions. `GET /mcp`, the stream a
 * stateful server may open, is answered 405 as the specification says for a server without one.
 *
 * A yoga plugin whose `onRequest` answers its own path, as /metrics does; the HTTP lane leaves
 * every path but the GraphQL endpoint to yoga, so the front needs no change. A tool call runs its
 * operation through the same yoga (call.ts).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';
import type { Plugin } from 'graphql-yoga';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { readCredentials, type HeaderSource } from '../credentials.js';
import { callTool, missingCredential, toolError, type ToolOutcome } from './call.js';
import type { McpTool } from './tools.js';

/** The path of the MCP endpoint. */
const MCP_PATH = '/mcp';

/** The schema's resource, with INTROSPECTION. */
const SCHEMA_URI = 'graphql://schema';

/** Where RFC 9728 puts the protected resource metadata of the resource at {@link MCP_PATH}. */
const METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_PATH}`;

/** What the endpoint serves, and how it is kept safe. */
type McpOptions = {
  tools: readonly McpTool[];
  /** CORS_ORIGINS: the pages of these origins may call it too; `*`: any */
  corsOrigins: readonly string[] | undefined;
  /** the largest body of a POST (REQUEST_MAX_BYTES), answered 413 past it */
  maxBodyBytes: number;
  /**
   * MCP_AUTHORIZATION_SERVERS: where agents get a bearer token. Set, the protected resource
   * metadata (RFC 9728) names them, and a POST with no credential is answered 401 pointing to it.
   */
  authorizationServers?: readonly string[] | undefined;
  /** the schema's SDL, offered as the resource `graphql://schema` (with INTROSPECTION); undefined: no resources */
  schemaSdl?: string | undefined;
  /** the gateway's yoga (known once it is built: its plugins, this one among them, come first) */
  yoga: () => GraphQLServer;
  /** counts each call, by tool and outcome (mcp_tool_calls_total) */
  observe?: ((tool: string, outcome: ToolOutcome) => void) | undefined;
};

/** The server's name and version, as `initialize` answers them. */
const SERVER_INFO = { name: 'petstore-gateway', version: '1.0.0' };

/** What a tool call needs of yoga: its GraphQL endpoint and its Fetch handler, which runs every plugin. */
export type GraphQLServer = {
  readonly graphqlEndpoint: string;
  fetch(request: Request, context: Record<string, unknown>): Response | Promise<Response>;
};

/** A tool with its compiled argument check. */
type ServedTool = { tool: McpTool; check: ValidateFunction };

/** The yoga plugin that serves `/mcp`. */
export function useMcp(options: McpOptions): Plugin {
  const ajv = new Ajv({ allErrors: true, strict: false });
  formats.default(ajv, ['date-time']);
  const tools = new Map<string, ServedTool>(
    options.tools.map((tool) => [tool.name, { tool, check: ajv.compile(tool.inputSchema) }]),
  );
  // What tools/list and the schema resource answer: the same for every POST, made once.
  const listed = options.tools.map((tool) => ({
    name: tool.name,
    title: tool.annotations.title,
    description: tool.description,
    inputSchema: tool.inputSchema as { type: 'object' },
    annotations: tool.annotations,
  }));
  const schema = options.schemaSdl === undefined ? undefined : { uri: SCHEMA_URI, sdl: options.schemaSdl };
  let sdk: Promise<typeof import('./server.js')> | undefined;
  return {
    async onRequest(payload) {
      const { request, url, fetchAPI, serverContext } = payload;
      const servers = options.authorizationServers;
      if (servers && url.pathname === METADATA_PATH && request.method === 'GET')
        return payload.endResponse(fetchAPI.Response.json(resourceMetadata(url, servers)));
      if (url.pathname !== MCP_PATH) return;
      const refusal = refused(request, url, options.corsOrigins);
      if (refusal !== undefined) return payload.endResponse(jsonRpcError(fetchAPI, ...refusal));
      if (servers && request.method === 'POST' && !carriesCredential(request.headers)) {
        // No credential at all: how an MCP client learns where to get one (the authorization specification).
        const answer = jsonRpcError(fetchAPI, 401, 'Unauthorized: send Authorization: Bearer <token> or api_key');
        answer.headers.set('www-authenticate', `Bearer resource_metadata="${url.origin}${METADATA_PATH}"`);
        return payload.endResponse(answer);
      }
      if (request.method !== 'POST') {
        const answer = jsonRpcError(
          fetchAPI,
          405,
          'Method not allowed: this stateless server opens no stream; POST messages to /mcp',
        );
        answer.headers.set('allow', 'POST');
        return payload.endResponse(answer);
      }
      const served = options.yoga();
      const graphql = {
        endpoint: served.graphqlEndpoint,
        // The node request goes along as the server context: the rate limits find the caller's address in it.
        fetch: async (inner: Request) => served.fetch(inner, { req: Reflect.get(serverContext, 'req') }),
      };
      // The SDK is loaded on the first call, not at start: MCP is off by default, and it weighs.
      const { serveMcp } = await (sdk ??= import('./server.js'));
      const answer = await serveMcp(request, {
        info: SERVER_INFO,
        maxBodyBytes: options.maxBodyBytes,
        schema,
        tools: listed,
        call: async (name, args) => {
          const served = tools.get(name);
          if (served === undefined) return undefined;
          const { result, outcome } = await call(served, args, request.headers, graphql);
          options.observe?.(served.tool.name, outcome);
          return result;
        },
      });
      // Re-made with yoga's Fetch API, which its node adapter writes.
      const body = await answer.text();
      payload.endResponse(
        new fetchAPI.Response(body === '' ? null : body, { status: answer.status, headers: answer.headers }),
      );
    },
  };
}

/**
 * The status and message refusing a request whose `Origin` is another site's (DNS rebinding:
 * the specification asks servers to check it). No Origin (a program, not a page) is fine; else
 * it must be one of CORS_ORIGINS, or the gateway's own origin when that is named by an address
 * or `localhost` (a page of a rebound name has its name in both Origin and Host, so a Host that
 * is a name proves nothing).
 */
function refused(request: Request, url: URL, corsOrigins: readonly string[] | undefined): [number, string] | undefined {
  const origin = request.headers.get('origin');
  if (origin === null) return undefined;
  if (corsOrigins?.includes('*') || corsOrigins?.includes(origin)) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addressed = host === 'localhost' || /^[\d.]+$/.test(host) || host.includes(':');
  if (addressed && origin === url.origin) return undefined;
  return [403, `Forbidden: Origin ${origin} may not call this server (CORS_ORIGINS names the pages that may)`];
}

/** The protected resource metadata of `/mcp` (RFC 9728): the resource, and where to get a token for it. */
function resourceMetadata(url: URL, servers: readonly string[]) {
  return {
    resource: `${url.origin}${MCP_PATH}`,
    authorization_servers: servers,
    bearer_methods_supported: ['header'],
    resource_name: SERVER_INFO.name,
  };
}

/** True when the request carries a credential the gateway forwards: a bearer token or an api_key. */
function carriesCredential(headers: HeaderSource): boolean {
  const { bearer, apiKey } = readCredentials(headers);
  return bearer !== undefined || apiKey !== undefined;
}

/** A JSON-RPC error answer without an id, as the transport sends its own refusals. */
function jsonRpcError(fetchAPI: { Response: typeof Response }, status: number, message: string): Response {
  const body = { jsonrpc: '2.0', error: { code: -32000, message }, id: null };
  return fetchAPI.Response.json(body, { status });
}

/** One call: its arguments checked against its input schema, its credentials, then its operation. */
async function call(
  { tool, check }: ServedTool,
  args: Record<string, unknown>,
  headers: HeaderSource,
  graphql: Parameters<typeof callTool>[3],
): Promise<{ result: CallToolResult; outcome: ToolOutcome }> {
  if (!check(args)) {
    const problems = (check.errors ?? []).map((error) => `${error.instancePath || 'arguments'} ${error.message ?? ''}`);
    return {
      result: toolError(`Invalid arguments for ${tool.name}: ${problems.join('; ')}`),
      outcome: 'invalid_arguments',
    };
  }
  const missing = missingCredential(tool, headers);
  if (missing) return { result: missing, outcome: 'missing_credential' };
  return callTool(tool, args, headers, graphql);
}
