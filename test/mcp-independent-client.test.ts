/**
 * The MCP endpoint driven by a second, independent client: the AI SDK's (`@ai-sdk/mcp`, Vercel's
 * implementation of the protocol, its transport and its version negotiation; it does not use the
 * official SDK the gateway is built with, which test/mcp.test.ts drives). What an agent built on
 * the AI SDK sees: the default tools and their schemas, a call that answers, a call that lacks a
 * credential, and what the upstream received.
 *
 * The client supports Node.js 22 and later, so it runs in a process of its own, started once for
 * the file and handed one conversation at a time: on the node running the tests when that is 22
 * or later (CI's second run, on the shipped line), else on the shipped line's binary that
 * scripts/fetch-node.sh keeps (as CI and the bench find it). Without either the tests fail, saying so.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation, Held, Step, Transcript } from './fixtures/ai-sdk-mcp-client.js';
import { DEFAULT_TOOLS, GET_INVENTORY, GET_PET_1 } from './helpers/answers.js';
import { PROJECT_ROOT } from './helpers/process.js';
import { ALL_CREDENTIALS, API_KEY, BEARER, expectedGet, summary, useStack } from './helpers/stack.js';

const stack = useStack({ mcp: true });

/** The oldest Node.js line `@ai-sdk/mcp` supports (its `engines`). */
const CLIENT_NODE_MAJOR = 22;

/**
 * A node for the client: this one when it is recent enough, else the shipped line's from
 * scripts/fetch-node.sh (cached by CI before the tests; fetched from the npm registry otherwise).
 */
function clientNode(): string {
  if (Number(process.versions.node.split('.')[0]) >= CLIENT_NODE_MAJOR) return process.execPath;
  const fetched = spawnSync('bash', [join(PROJECT_ROOT, 'scripts/fetch-node.sh')], { encoding: 'utf8' });
  if (fetched.status !== 0)
    throw new Error(
      `the independent MCP client needs Node.js ${CLIENT_NODE_MAJOR} or later; the tests run on ${process.version} ` +
        `and scripts/fetch-node.sh found no other:\n${fetched.stderr}`,
    );
  return join(fetched.stdout.trim(), 'node');
}

/** The client's process, and the lines it prints: one transcript per conversation. */
let client: { child: ChildProcessWithoutNullStreams; lines: AsyncIterator<string>; stderr: () => string } | undefined;

beforeAll(() => {
  const child = spawn(clientNode(), ['--import', 'tsx', 'test/fixtures/ai-sdk-mcp-client.ts'], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env['PATH'] ?? '' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  client = { child, lines: createInterface({ input: child.stdout })[Symbol.asyncIterator](), stderr: () => stderr };
}, 180_000);

afterAll(() => {
  // Its input ended, it exits; killed in case it hangs.
  client?.child.stdin.end();
  client?.child.kill();
});

/** Holds a conversation with the stack's /mcp through the AI SDK's client. */
async function converse(headers: Record<string, string>, steps: Step[]): Promise<Held> {
  if (client === undefined) throw new Error('the client is started before the tests');
  const conversation: Conversation = { url: new URL('/mcp', stack.url).href, headers, steps };
  client.child.stdin.write(`${JSON.stringify(conversation)}\n`);
  const { value, done } = await client.lines.next();
  if (done === true) throw new Error(`the client exited (${client.child.exitCode}):\n${client.stderr()}`);
  const transcript = JSON.parse(value) as Transcript;
  if ('failed' in transcript) throw new Error(`the client could not connect: ${transcript.failed}`);
  return transcript;
}

/** A step's result, which must have succeeded. */
function resultOf(transcript: Held, index = 0): Record<string, unknown> {
  const step = transcript.results[index];
  if (step?.ok !== true) throw new Error(`step ${index} failed: ${step?.ok === false ? step.error : 'no result'}`);
  return step.result as Record<string, unknown>;
}

/** The text of a tool result's first content item. */
function textOf(result: Record<string, unknown>): string {
  const [first] = (result['content'] ?? []) as { type: string; text?: string }[];
  return first?.type === 'text' ? (first.text ?? '') : '';
}

describe('the AI SDK MCP client', { timeout: 60_000 }, () => {
  it('lists the default tools with their input schemas, after settling on a protocol version', async () => {
    const transcript = await converse({}, [{ method: 'tools/list' }]);

    const { tools } = resultOf(transcript) as { tools: { name: string; inputSchema: unknown }[] };
    expect(tools.map((tool) => tool.name).sort()).toEqual(DEFAULT_TOOLS);
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool.inputSchema]));
    expect(byName['GetPet']).toEqual({
      type: 'object',
      properties: { id: { type: 'string', description: 'Identifier of the pet (int64).' } },
      required: ['id'],
      additionalProperties: false,
    });
    expect(byName['GetOrder']).toMatchObject({ required: ['id'], properties: { id: { type: 'string' } } });
    expect(byName['GetUser']).toMatchObject({ required: ['username'], properties: { username: { type: 'string' } } });
    expect(byName['GetInventory']).toEqual({ type: 'object', properties: {}, additionalProperties: false });
    expect(byName['FindPetsByStatus']).toMatchObject({
      required: ['status'],
      properties: { status: { type: 'array', items: { enum: ['AVAILABLE', 'PENDING', 'SOLD'] } } },
    });
    expect(transcript).toMatchObject({ protocolVersion: '2025-11-25', serverName: 'petstore-gateway' });
    // It asks first in the stateless revision it prefers (2026-07-28, `server/discover`), which the
    // gateway's SDK does not speak: refused with 400, it falls back to `initialize`.
    expect(transcript.exchanges.filter((exchange) => exchange.http === 'POST')).toEqual([
      { http: 'POST', method: 'server/discover', protocolVersion: '2026-07-28', status: 400 },
      { http: 'POST', method: 'initialize', protocolVersion: '2025-11-25', status: 200 },
      { http: 'POST', method: 'notifications/initialized', protocolVersion: '2025-11-25', status: 202 },
      { http: 'POST', method: 'tools/list', protocolVersion: '2025-11-25', status: 200 },
    ]);
    // The stream it tries to open is refused as a stateless server does, and it goes on without one.
    expect(
      new Set(transcript.exchanges.filter((exchange) => exchange.http === 'GET').map((get) => get.status)),
    ).toEqual(new Set([405]));
    expect(stack.upstream()).toEqual([]);
  });

  it('GetPet {"id":"1"} returns the pet, and the upstream received GET /pet/1 with the api_key only', async () => {
    const transcript = await converse(ALL_CREDENTIALS, [
      { method: 'tools/call', name: 'GetPet', arguments: { id: '1' } },
    ]);

    const result = resultOf(transcript);
    expect(result['isError']).toBeFalsy();
    expect(result['structuredContent']).toEqual(GET_PET_1);
    expect(JSON.parse(textOf(result))).toEqual(result['structuredContent']);
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/1', 'api_key')]);
  });

  it('GetInventory without api_key is a tool error naming the header, and nothing is called upstream', async () => {
    const transcript = await converse({ authorization: `Bearer ${BEARER}` }, [
      { method: 'tools/call', name: 'GetInventory', arguments: {} },
    ]);

    const result = resultOf(transcript);
    expect(result['isError']).toBe(true);
    expect(textOf(result)).toMatch(/^GetInventory needs the api_key header/);
    expect(stack.upstream()).toEqual([]);
  });

  it('GetInventory with api_key returns the counts; the api_key went upstream and the bearer token did not', async () => {
    const transcript = await converse({ api_key: API_KEY, authorization: `Bearer ${BEARER}` }, [
      { method: 'tools/call', name: 'GetInventory', arguments: {} },
    ]);

    const result = resultOf(transcript);
    expect(result['isError']).toBeFalsy();
    expect(result['structuredContent']).toEqual(GET_INVENTORY);
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/store/inventory', 'api_key')]);
  });
});
