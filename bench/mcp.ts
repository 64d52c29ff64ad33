/**
 * What an MCP tool call costs against the same GraphQL request (issue 36): the compiled gateway
 * (WORKERS=1, MCP=true, UPSTREAM_DEDUPE=false so that no request rides on another's upstream
 * call) in front of the 0 ms emulator, on 10 connections, asked the shipped `GetPet` operation
 * for pets 1–50 in turn (each connection walks the ids, so sharing would answer nothing anyway)
 * either as a GraphQL POST to `/graphql` or as a `tools/call` of the `GetPet` tool to `/mcp`
 * (stateless, JSON answer): the same document, the same variables, the same upstream call. The
 * two alternate round by round on the one gateway; its CPU time is read from `/proc` around each
 * round.
 *
 * `npm run bench -- --mcp --profile`: a CPU profile of each (`--cpu-prof`, the unbundled build),
 * one gateway per kind of request, summarised in `bench/.out/profiles/mcp/summary.md`.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createSchema } from '../src/schema.js';
import { loadTools } from '../src/mcp/tools.js';
import { cpuMsBetween, cpuTicksOf, OUTPUT_DIR, startGateway, startReportingChild, type Child } from './children.js';
import { percentile, runLoad, type Target } from './load.js';
import { summariseProfiles } from './profile.js';
import { CREDENTIAL_HEADERS, seedUpstream } from './scenarios.js';

/** The two ways of asking, by the label they carry in the report. */
export const MCP_CONTENDERS = { graphql: 'GraphQL POST /graphql', tool: 'MCP tools/call POST /mcp' } as const;
type Way = keyof typeof MCP_CONTENDERS;

/** The pets asked, in turn: the emulator's 1–10 and the bench's 11–50 (`seedUpstream`). */
const PET_IDS = Array.from({ length: 50 }, (_, index) => String(index + 1));
const CONNECTIONS = 10;

/** One way of asking, its rounds merged. */
export type McpCostRun = {
  contender: string;
  requests: number;
  seconds: number;
  /** the gateway's user + system CPU time over the measured rounds */
  cpuMs: number;
  p50: number;
  p99: number;
  failures: number;
};

/** How long: a warm-up per way, then `rounds` rounds of `seconds` per way, alternating. */
type McpPlan = { rounds: number; seconds: number; warmupSeconds: number };

/** The measure: how it was run, and each way's figures. */
export type McpCost = { plan: McpPlan; connections: number; runs: McpCostRun[] };

/** The settings of the gateway measured; the upstream URLs come with the emulator. */
const GATEWAY_ENV = { NODE_ENV: 'production', WORKERS: '1', MCP: 'true', UPSTREAM_DEDUPE: 'false' };

/** The document the `GetPet` tool runs (the operation and its fragment), as the gateway reads it from schema/mcp/. */
function getPetDocument(): string {
  const tool = loadTools(createSchema(), { mutations: [] }).find((each) => each.name === 'GetPet');
  if (tool === undefined) throw new Error('schema/mcp/ has no GetPet operation');
  return tool.document;
}

/** Every pet's request, one way: the load generator sends them in turn on each connection. */
function targets(way: Way, graphqlUrl: string, document: string): Target[] {
  if (way === 'graphql')
    return PET_IDS.map((id) => ({
      url: graphqlUrl,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...CREDENTIAL_HEADERS },
      body: JSON.stringify({ query: document, operationName: 'GetPet', variables: { id } }),
    }));
  return PET_IDS.map((id) => ({
    url: new URL('/mcp', graphqlUrl).href,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...CREDENTIAL_HEADERS,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: Number(id),
      method: 'tools/call',
      params: { name: 'GetPet', arguments: { id } },
    }),
  }));
}

/** The pet of an answer, either way; undefined when it is not there. */
function petOf(way: Way, answer: unknown): { id?: unknown } | undefined {
  const body = answer as {
    data?: { pet?: { id?: unknown } };
    result?: { isError?: boolean; structuredContent?: { pet?: { id?: unknown } } };
  };
  if (way === 'graphql') return body.data?.pet;
  return body.result?.isError === true ? undefined : body.result?.structuredContent?.pet;
}

/** Sends every request of a way once and checks that each answers its own pet, before anything is measured. */
async function check(way: Way, requests: readonly Target[]): Promise<void> {
  for (const [index, target] of requests.entries()) {
    const response = await fetch(target.url, { method: target.method, headers: target.headers, body: target.body });
    const text = await response.text();
    const pet = response.ok ? petOf(way, JSON.parse(text)) : undefined;
    if (pet?.id !== PET_IDS[index])
      throw new Error(`${MCP_CONTENDERS[way]}, pet ${PET_IDS[index]}: ${response.status} ${text.slice(0, 300)}`);
  }
}

/** The 0 ms emulator with the bench's pets, in its own process. */
async function startUpstream(): Promise<Child & { info: { petstoreUrl: string; plantsUrl: string } }> {
  const emulator = await startReportingChild<{ petstoreUrl: string; plantsUrl: string }>(
    'emulator mcp',
    'bench/emulator.ts',
    ['0'],
  );
  await seedUpstream(emulator.info.petstoreUrl);
  return emulator;
}

/** The measure: both ways on one gateway, alternating round by round. */
export async function mcpCost(plan: McpPlan): Promise<McpCost> {
  console.log(
    `MCP tool call against the same GraphQL request: ${plan.rounds} round(s) of ${plan.seconds} s each, ${CONNECTIONS} connections`,
  );
  const document = getPetDocument();
  const emulator = await startUpstream();
  const children: Child[] = [emulator];
  try {
    const gateway = await startGateway('mcp cost', {
      ...GATEWAY_ENV,
      PETSTORE_URL: emulator.info.petstoreUrl,
      PLANTS_URL: emulator.info.plantsUrl,
    });
    children.push(gateway);
    const ways: Way[] = ['graphql', 'tool'];
    const requests = new Map(ways.map((way) => [way, targets(way, gateway.url, document)] as const));
    for (const way of ways) await check(way, requests.get(way) ?? []);
    for (const way of ways)
      await runLoad(requests.get(way) ?? [], { connections: CONNECTIONS, seconds: plan.warmupSeconds });
    const runs = new Map(ways.map((way) => [way, [] as (Awaited<ReturnType<typeof runLoad>> & { cpuMs: number })[]]));
    for (let round = 0; round < plan.rounds; round += 1) {
      // Each round starts with the other way, so that neither is always first after a pause.
      for (const way of round % 2 === 0 ? ways : [...ways].reverse()) {
        const before = cpuTicksOf([gateway.pid]);
        const result = await runLoad(requests.get(way) ?? [], { connections: CONNECTIONS, seconds: plan.seconds });
        runs.get(way)?.push({ ...result, cpuMs: cpuMsBetween(before, cpuTicksOf([gateway.pid])) });
      }
    }
    const figures = ways.map((way) => {
      const results = runs.get(way) ?? [];
      const latencies = results.flatMap((result) => result.latencies);
      const run: McpCostRun = {
        contender: MCP_CONTENDERS[way],
        requests: results.reduce((sum, result) => sum + result.requests, 0),
        seconds: results.reduce((sum, result) => sum + result.seconds, 0),
        cpuMs: results.reduce((sum, result) => sum + result.cpuMs, 0),
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        failures: results.reduce((sum, result) => sum + result.failures, 0),
      };
      console.log(
        `  ${run.contender.padEnd(26)} ${(run.requests / run.seconds).toFixed(0).padStart(6)} req/s  p50 ${run.p50.toFixed(2)} ms  cpu ${(run.cpuMs / Math.max(1, run.requests)).toFixed(3)} ms/call${run.failures ? `  FAILURES ${run.failures}` : ''}`,
      );
      return run;
    });
    return { plan, connections: CONNECTIONS, runs: figures };
  } finally {
    for (const child of children.reverse()) await child.stop();
  }
}

/**
 * `--mcp --profile`: one CPU profile per way, each of a gateway (the unbundled build, so that the
 * profile names our modules) asked that way only for `seconds`, summarised side by side.
 */
export async function mcpProfiles(seconds: number): Promise<string> {
  const dir = new URL('profiles/mcp/', OUTPUT_DIR);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const document = getPetDocument();
  const emulator = await startUpstream();
  try {
    for (const way of ['graphql', 'tool'] as const) {
      const name = way === 'graphql' ? 'graphql-request' : 'mcp-tool-call';
      const gateway = await startGateway(
        `profile ${name}`,
        { ...GATEWAY_ENV, PETSTORE_URL: emulator.info.petstoreUrl, PLANTS_URL: emulator.info.plantsUrl },
        { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${new URL(`${name}/`, dir).pathname}`] },
      );
      try {
        const requests = targets(way, gateway.url, document);
        await check(way, requests);
        const before = cpuTicksOf([gateway.pid]);
        const result = await runLoad(requests, { connections: CONNECTIONS, seconds });
        const cpuMs = cpuMsBetween(before, cpuTicksOf([gateway.pid]));
        console.log(
          `  ${name}: ${(result.requests / result.seconds).toFixed(0)} req/s, ${(cpuMs / Math.max(1, result.requests)).toFixed(3)} ms CPU/call while profiling`,
        );
      } finally {
        // The profile is written when the gateway exits.
        await gateway.stop();
      }
    }
  } finally {
    await emulator.stop();
  }
  const summary = summariseProfiles(dir);
  writeFileSync(new URL('summary.md', dir), summary);
  return summary;
}
