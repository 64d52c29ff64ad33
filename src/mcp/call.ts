/**
 * One tool call: its operation run as a GraphQL request through the gateway's own yoga, so that
 * validation, limits, rate limits, the upstream call budget, masking, the log line, metrics and
 * traces apply to it exactly as to any GraphQL request. The caller's credentials are the MCP HTTP
 * request's `Authorization` and `api_key` headers, passed on by an allow-list (nothing else of
 * the MCP request is); each REST operation then receives only the one it declares.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CREDENTIAL_HEADERS, readCredentials, type HeaderSource } from '../credentials.js';
import type { McpTool } from './tools.js';

/** How a call ended, for `mcp_tool_calls_total{outcome}`. */
export type ToolOutcome = 'ok' | 'partial' | 'graphql_error' | 'invalid_arguments' | 'missing_credential';

/** What a call runs through: the gateway's yoga, as a Fetch handler. */
type GraphQLFetch = (request: Request) => Promise<Response>;

/** The headers of the inner GraphQL request, and which of the MCP request's are passed on. */
const PASSED_ON = [CREDENTIAL_HEADERS.bearer, CREDENTIAL_HEADERS.apiKey, 'x-forwarded-for'] as const;

/** The header a caller is told to send, for each credential. */
const HEADER_NAMES = { apiKey: 'api_key', bearer: 'Authorization' } as const;

/**
 * The tool error saying which credential header a tool needs and the caller did not send, or
 * undefined when it sent what the tool's REST operations declare.
 */
export function missingCredential(tool: McpTool, headers: HeaderSource): CallToolResult | undefined {
  const sent = readCredentials(headers);
  const has = { apiKey: sent.apiKey !== undefined, bearer: sent.bearer !== undefined };
  const missing = tool.credentials.all.filter((credential) => !has[credential]).map((name) => HEADER_NAMES[name]);
  const unmet = tool.credentials.oneOf.find((either) => !either.some((credential) => has[credential]));
  if (missing.length === 0 && unmet === undefined) return undefined;
  const what =
    missing.length > 0
      ? `the ${missing.join(' and the ')} header${missing.length > 1 ? 's' : ''}`
      : `the ${(unmet ?? []).map((name) => HEADER_NAMES[name]).join(' or the ')} header`;
  const bearer =
    missing.includes('Authorization') || (unmet ?? []).includes('bearer') ? ' (Authorization: Bearer <token>)' : '';
  return toolError(
    `${tool.name} needs ${what}${bearer}: set it on the MCP client's HTTP requests to this server. ` +
      'It is passed on only to the REST operations that declare it.',
  );
}

/** Runs a tool's operation through yoga; GraphQL errors become a tool error with their message and code. */
export async function callTool(
  tool: McpTool,
  args: Record<string, unknown>,
  headers: HeaderSource,
  graphql: { endpoint: string; fetch: GraphQLFetch },
): Promise<{ result: CallToolResult; outcome: ToolOutcome }> {
  const passed: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json, application/json',
  };
  for (const name of PASSED_ON) {
    const value = headers.get(name);
    if (value !== null) passed[name] = value;
  }
  const response = await graphql.fetch(
    new Request(`http://gateway${graphql.endpoint}`, {
      method: 'POST',
      headers: passed,
      body: JSON.stringify({
        // With TRUSTED_DOCUMENTS, by its hash in the manifest, as only the manifest's documents run.
        ...(tool.trustedHash === undefined
          ? { query: tool.document }
          : { extensions: { persistedQuery: { version: 1, sha256Hash: tool.trustedHash } } }),
        operationName: tool.name,
        variables: args,
      }),
    }),
  );
  const answer = (await response.json()) as GraphQLAnswer;
  const errors = answer.errors ?? [];
  // Errors and nothing else (no data, or every root field null) fail the call; with data they come along.
  const nothing = answer.data == null || Object.values(answer.data).every((value) => value === null);
  if (errors.length > 0 && nothing)
    return { result: toolError(errors.map(errorLine).join('\n')), outcome: 'graphql_error' };
  if (answer.data == null) return { result: toolError(`${tool.name} answered nothing`), outcome: 'graphql_error' };
  const text = JSON.stringify(errors.length > 0 ? { data: answer.data, errors: errors.map(errorJson) } : answer.data);
  return {
    result: { content: [{ type: 'text', text }], structuredContent: answer.data },
    outcome: errors.length > 0 ? 'partial' : 'ok',
  };
}

/** A GraphQL answer, as far as a tool reads it. */
type GraphQLAnswer = {
  data?: Record<string, unknown> | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: { code?: unknown } }[];
};
type AnswerError = NonNullable<GraphQLAnswer['errors']>[number];

/** An error as a line of a tool error: its message, its code and where. */
function errorLine(error: AnswerError): string {
  const { code, path } = errorJson(error);
  return `${error.message} (${[code, path && `at ${path}`].filter(Boolean).join(', ')})`;
}

/** An error as a partial answer lists it. */
function errorJson(error: AnswerError): { message: string; code?: string; path?: string } {
  const code = typeof error.extensions?.code === 'string' ? error.extensions.code : undefined;
  return { message: error.message, ...(code && { code }), ...(error.path && { path: error.path.join('.') }) };
}

/** A tool error: a result the agent reads, with `isError`. */
export function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
