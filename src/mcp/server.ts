/**
 * The MCP server of one POST to `/mcp`, on the official SDK: a fresh server and Streamable HTTP
 * transport per request (stateless: no session, so replicas need no sticky sessions), JSON
 * answers, closed once it has answered. Loaded by `plugin.ts` on the first call only: the SDK
 * and what it brings cost start-up time and memory that a gateway without MCP should not pay.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

/** What one request is served with: the tools as `tools/list` gives them, and how a call is made. */
export type McpSetup = {
  info: { name: string; version: string };
  maxBodyBytes: number;
  /** the schema's SDL as a resource, with INTROSPECTION; undefined: no resources */
  schema: { uri: string; sdl: string } | undefined;
  tools: Tool[];
  /** the result of a call of the tool `name`; undefined when there is no such tool */
  call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult | undefined>;
};

/**
 * The JSON Schema validator of every server. A server given none makes an Ajv instance of its
 * own, with its formats: with a server per POST, that was a fifth of a tool call's CPU (2.28 ms
 * against 1.82 ms, one process, Node 26). It checks only answers to elicitation requests, which
 * this server never sends.
 */
const VALIDATOR = new AjvJsonSchemaValidator();

/** Serves one POST with a fresh server and transport (stateless), closed once it has answered. */
export async function serveMcp(request: Request, setup: McpSetup): Promise<Response> {
  const capabilities = { tools: { listChanged: false }, ...(setup.schema !== undefined && { resources: {} }) };
  const server = new McpServer(setup.info, { capabilities, jsonSchemaValidator: VALIDATOR });
  if (setup.schema !== undefined) offerSchema(server, setup.schema);
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: setup.tools }));
  server.server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    const result = await setup.call(params.name, params.arguments ?? {});
    // An unknown tool is a protocol error; bad arguments are the tool's, so that the agent can correct them.
    if (result === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
    return result;
  });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: setup.maxBodyBytes,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request);
  } finally {
    await server.close();
  }
}

/** The schema's SDL as a resource, for an agent that writes its own operations into tools. */
function offerSchema(server: McpServer, schema: { uri: string; sdl: string }): void {
  const resource = {
    uri: schema.uri,
    name: 'schema',
    title: 'GraphQL schema',
    description: "The gateway's GraphQL schema (SDL): every type and field, with its description",
    mimeType: 'application/graphql',
  };
  server.server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [resource] }));
  server.server.setRequestHandler(ReadResourceRequestSchema, ({ params }) => {
    // -32002: the specification's code for a resource that does not exist.
    if (params.uri !== schema.uri) throw new McpError(-32002, `Resource not found: ${params.uri}`);
    return { contents: [{ uri: schema.uri, mimeType: resource.mimeType, text: schema.sdl }] };
  });
}
