/**
 * `npm run bench`: the compiled gateway against direct REST calls and against the framework
 * ceiling, scenario by scenario, at two upstream latencies and two concurrencies, with
 * contenders alternating run by run so that machine drift cancels out; then the issue's other
 * measures (start to first answer, idle memory, shared in-flight calls, the mixed workload with the
 * upstream cache off and on). Writes `bench/RESULTS.md`.
 *
 *   npm run bench                  full run (about 20 minutes)
 *   npm run bench -- --quick       about 2 minutes, for development (written to bench/.out/RESULTS.quick.md):
 *                                  one round of 1 s, 10 connections only, 2 starts, no response-cache variant,
 *                                  no one-client runs, a 3 s steady run
 *   npm run bench -- --profile     CPU profiles of the compiled gateway per scenario (bench/.out/profiles/),
 *                                  one process, sharing off; --latency=5 for a 5 ms upstream
 *   npm run bench -- --faults      the faults under load only (bench/.out/RESULTS.faults.md; with --quick, 5 s each)
 *   npm run bench -- --mcp         an MCP tool call against the same GraphQL request only (bench/.out/RESULTS.mcp.md;
 *                                  with --quick, 2 rounds of 2 s); with --profile, a CPU profile of each instead
 *                                  (bench/.out/profiles/mcp/)
 *   npm run bench -- --scenario=5  one scenario's rows only, none of the other measures (bench/.out/RESULTS.scenario-5.md);
 *                                  with --profile, that scenario's profile only
 *
 * Runtime. Every child process (the gateways, the emulator, the ceiling, the direct client) runs on
 * the Node.js line the image ships: the binary `scripts/fetch-node.sh` pins, fetches once and
 * caches (`--node=<path>` for another). The bench's own process (autocannon, and the recording
 * emulators of the side measures) runs on whatever node runs `npm run bench`. When that node is
 * another major (the build machines' Node.js 20), the same build runs on it too, as
 * `gateway WORKERS=1, UPSTREAM_DEDUPE=false, Node 20`, in the same rounds as the others, for the
 * key rows (scenarios 1 and 2, 10 connections, 0 and 5 ms) and the starts: the older line's
 * column while it is supported (`--baseline-node=<path>` to name it, `=none` for none).
 * `--baseline-ref=<git ref>` adds that commit's build on the older line beside it (built apart in
 * bench/.out/baseline-<commit>/, started with the node flags of its own `npm start`): the
 * earlier figures the CPU targets are set against, measured in the same run. RESULTS.md's head
 * says which runtime each figure came from.
 *
 * Processes: the load generator (this one, autocannon), the upstream (the emulator, with a
 * fixed added latency), the gateway (compiled by `npm run build` at the start, then run as
 * `npm start` runs it: the node arguments of package.json's start script, with
 * NODE_ENV=production; with WORKERS=auto it is a cluster primary and its workers), the framework ceiling
 * (`bench/ceiling.ts`, under tsx) and the direct fan-out client (`bench/direct-client.ts`), each
 * in its own process.
 */
import { createHash } from 'node:crypto';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { startEmulator } from '../src/emulator/server.js';
import { startRedisServer, type RedisServer } from '../test/helpers/redis-server.js';
import {
  buildBaseline,
  buildGateway,
  useRuntime,
  CLOCK_TICKS,
  cpuMsBetween,
  cpuTicksOf,
  memoryOf,
  OUTPUT_DIR,
  processTree,
  shippedRuntime,
  startArguments,
  startGateway,
  startReportingChild,
  type Child,
} from './children.js';
import { percentile, runLoad, type Target } from './load.js';
import { compare, measuredRun, type Contender } from './rounds.js';
import { faultRuns } from './faults.js';
import { mcpCost, mcpProfiles } from './mcp.js';
import { summariseProfiles } from './profile.js';
import {
  CACHED,
  CONTENDER,
  LEAST_PROXY,
  renderFaults,
  renderMcpCost,
  renderResults,
  type CallCount,
  type ProcessPeak,
  type MixedRun,
  type LiveAtRestRun,
  type ContractCheckRun,
  type ResultsInput,
  type SamePetRun,
  type SingleClient,
  type StartupRun,
  type SteadyRun,
} from './report.js';
import {
  CREDENTIAL_HEADERS,
  MIXED_PETS,
  mixedWorkload,
  SCENARIOS,
  seedMixedPets,
  seedUpstream,
  type Scenario,
} from './scenarios.js';

const argv = process.argv.slice(2);
/** The value of `--name=value`, if given. */
const option = (name: string) => argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(`--${name}=`.length);

/** A node binary's version (`v26.12.1`). */
function versionOf(node: string): string {
  return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
}
const major = (version: string) => version.replace(/^v/, '').split('.')[0] ?? '';

/**
 * The runtime every child runs on (gateways, emulator, ceiling, direct client): `--node=<path>`, or
 * by default the line the image ships, from `scripts/fetch-node.sh` (downloaded once, then cached).
 */
const RUNTIME = (() => {
  const given = option('node');
  const node = given ?? shippedRuntime();
  return { node, version: versionOf(node) };
})();
useRuntime(RUNTIME.node);

/**
 * `--baseline-ref=<git ref>`: that commit's gateway too (built apart, `buildBaseline`), on the
 * baseline runtime, beside the others for the same key rows: the figures of an earlier build on
 * the older line, which the CPU targets are set against. None by default.
 */
const BASELINE_REF = option('baseline-ref');

/**
 * An older line run beside it for the key rows (scenarios 1 and 2, one process, sharing off, 10
 * connections, at 0 and 5 ms, and the starts): `--baseline-node=<path>`, or by default the node
 * that runs the bench when it is another major than {@link RUNTIME} (on the build machines, their
 * Node.js 20); `--baseline-node=none` for none.
 */
const BASELINE = (() => {
  const given = option('baseline-node');
  if (given === 'none') return undefined;
  const node = given ?? process.execPath;
  const version = versionOf(node);
  if (given === undefined && major(version) === major(RUNTIME.version)) return undefined;
  return { node, version, label: `${CONTENDER.noDedupe}, Node ${major(version)}` };
})();

/** The latency budget, written by hand from a run with timing instrumentation (see the file), shown in RESULTS.md. */
const LATENCY_BUDGET = new URL('latency-budget.md', import.meta.url);

/** The baseline build ({@link BASELINE_REF}), once built: its directory, and the label of its contender. */
let baselineBuild: { root: string; commit: string; label: string } | undefined;
const QUICK = argv.includes('--quick');
const PROFILE = argv.includes('--profile');
/** `--mcp`: the MCP tool call's cost only. */
const MCP = argv.includes('--mcp');
/** `--scenario=N`: that scenario only. */
const ONLY = option('scenario');
const SELECTED = SCENARIOS.filter((each) => ONLY === undefined || String(each.id) === ONLY);
if (SELECTED.length === 0) throw new Error(`--scenario=${ONLY}: no such scenario`);

/** How long and how often; the full run is what `bench/RESULTS.md` holds. */
const PLAN = QUICK
  ? {
      latencies: [0, 5],
      connections: [10],
      seconds: 1,
      rounds: 1,
      warmupSeconds: 0.3,
      singleSeconds: 1,
      singleRounds: 0,
      steadySeconds: 3,
      starts: 2,
      samePetSeconds: 1.5,
      faultSeconds: { faults: 5, shedding: 5 },
      mcp: { rounds: 2, seconds: 2, warmupSeconds: 0.5 },
    }
  : {
      latencies: [0, 5],
      connections: [10, 50],
      seconds: 3,
      rounds: 3,
      warmupSeconds: 1,
      singleSeconds: 3,
      singleRounds: 2,
      steadySeconds: 60,
      starts: 5,
      samePetSeconds: 5,
      faultSeconds: { faults: 45, shedding: 20 },
      mcp: { rounds: 5, seconds: 3, warmupSeconds: 1 },
    };

/**
 * Settings of every gateway process (and of the ceiling) besides the upstream URLs: what a real
 * deployment runs. Everything else is the default: rate limits off (opt-in), UPSTREAM_DEDUPE on.
 */
const PRODUCTION_ENV = { NODE_ENV: 'production' };

/** The response cache and both rate limits on, the limits far above what the bench sends. */
const CACHE_AND_LIMITS = {
  RESPONSE_CACHE_TTL_MS: '60000',
  RATE_LIMIT_PER_MINUTE: '100000000',
  RATE_LIMIT_ADDRESS_PER_MINUTE: '100000000',
};

/** The page origin the CORS contenders are called from, and allow. */
const BENCH_ORIGIN = 'https://app.example';

/** The trusted documents manifest of the hardened contender: every scenario's document by its SHA-256 hash. */
const TRUSTED_MANIFEST = new URL('trusted-documents.json', OUTPUT_DIR);

/** A scenario's GraphQL body with its document named by hash, as a client of trusted documents sends it. */
function persistedBody(graphql: string): string {
  const { query, ...rest } = JSON.parse(graphql) as { query: string };
  const sha256Hash = createHash('sha256').update(query).digest('hex');
  return JSON.stringify({ ...rest, extensions: { persistedQuery: { version: 1, sha256Hash } } });
}

/** Writes {@link TRUSTED_MANIFEST}. */
function writeTrustedManifest(): void {
  const manifest: Record<string, string> = {};
  for (const scenario of SCENARIOS) {
    const { query } = JSON.parse(scenario.graphql) as { query: string };
    manifest[createHash('sha256').update(query).digest('hex')] = query;
  }
  mkdirSync(OUTPUT_DIR, { recursive: true });
  writeFileSync(TRUSTED_MANIFEST, JSON.stringify(manifest));
}

/** The bench's own redis-server (persistence off), when Debian's `redis-server` is installed. */
let redisUrl: string | undefined;

/** The gateway as deployed, with one process and with one per core, and the variants shown beside it. */
type GatewayVariant = {
  label: string;
  env: Record<string, string>;
  /** request headers added to the GraphQL ones (`accept-encoding`, to ask for compressed answers) */
  headers?: Record<string, string>;
  /** given REDIS_URL: the bench's redis-server (left out when there is none) */
  redis?: boolean;
  /** sends each scenario's document by hash (`extensions.persistedQuery`), as a client of trusted documents does */
  trusted?: boolean;
  scenarios: readonly number[];
  /** the scenarios at an upstream latency, where fewer than `scenarios` */
  scenariosAt?: Partial<Record<number, readonly number[]>>;
  /** runs on the baseline runtime ({@link BASELINE}) instead of the bench's; `build`: the baseline build too */
  baseline?: boolean | 'build';
  /** only at these concurrencies (default: all of the plan's) */
  connections?: readonly number[];
  /** only at these upstream latencies (default: all of the plan's) */
  latencies?: readonly number[];
};
const ALL_VARIANTS: readonly (GatewayVariant & { quick: boolean })[] = [
  { label: CONTENDER.workers1, env: { WORKERS: '1' }, scenarios: [1, 2, 3, 4], quick: true },
  { label: CONTENDER.auto, env: { WORKERS: 'auto' }, scenarios: [1, 2, 3, 4], quick: true },
  // One upstream call per request even when 10 connections ask the same pet: the CPU cost of a request
  // that is not shared.
  // At 5 ms too, for scenarios 1 and 2: the latency targets of a request that shares no call.
  {
    label: CONTENDER.noDedupe,
    env: { WORKERS: '1', UPSTREAM_DEDUPE: 'false' },
    scenarios: [1, 2, 3, 5],
    scenariosAt: { 5: [1, 2] },
    connections: [10],
    quick: true,
  },
  // The same on the older line (BASELINE), in the same rounds: what the runtime alone changes.
  ...(BASELINE === undefined
    ? []
    : [
        {
          label: BASELINE.label,
          env: { WORKERS: '1', UPSTREAM_DEDUPE: 'false' },
          baseline: true,
          scenarios: [1, 2],
          connections: [10],
          quick: true,
        },
        ...(BASELINE_REF === undefined
          ? []
          : [
              {
                label: `${BASELINE.label}, build of ${BASELINE_REF}`,
                env: { WORKERS: '1', UPSTREAM_DEDUPE: 'false' },
                baseline: 'build' as const,
                scenarios: [1, 2],
                connections: [10],
                quick: true,
              },
            ]),
      ]),
  // Issue 20: the same large answer (scenario 5) asked compressed, beside the row above, which asks it
  // uncompressed: only Accept-Encoding differs. Sharing is off in all three, so that no request rides
  // on another's upstream call: with it on, a slower (compressing) gateway would share more calls,
  // and its extra CPU would partly hide in the calls it saved.
  {
    label: CONTENDER.brotli,
    env: { WORKERS: '1', UPSTREAM_DEDUPE: 'false' },
    headers: { 'accept-encoding': 'br' },
    scenarios: [5],
    connections: [10],
    latencies: [0],
    quick: true,
  },
  {
    label: CONTENDER.gzip,
    env: { WORKERS: '1', UPSTREAM_DEDUPE: 'false' },
    headers: { 'accept-encoding': 'gzip' },
    scenarios: [5],
    connections: [10],
    latencies: [0],
    quick: true,
  },
  // Issue 21: a browser-facing gateway, and a hardened one (trusted documents, CORS, rate limits set
  // too high to refuse), beside the default one with sharing off (CONTENDER.noDedupe).
  {
    label: CONTENDER.cors,
    env: { WORKERS: '1', UPSTREAM_DEDUPE: 'false', CORS_ORIGINS: BENCH_ORIGIN },
    headers: { origin: BENCH_ORIGIN },
    scenarios: [1, 2],
    connections: [10],
    latencies: [0],
    quick: true,
  },
  {
    label: CONTENDER.hardened,
    env: {
      WORKERS: '1',
      UPSTREAM_DEDUPE: 'false',
      CORS_ORIGINS: BENCH_ORIGIN,
      TRUSTED_DOCUMENTS: fileURLToPath(TRUSTED_MANIFEST),
      RATE_LIMIT_PER_MINUTE: '100000000',
      RATE_LIMIT_ADDRESS_PER_MINUTE: '100000000',
    },
    headers: { origin: BENCH_ORIGIN },
    trusted: true,
    scenarios: [1, 2],
    connections: [10],
    latencies: [0],
    quick: true,
  },
  // Issue 22: the contract check of upstream answers off and on every answer, beside the default
  // (its default sample, CONTENDER.noDedupe), and a request that asks to be explained.
  {
    label: CONTENDER.contractOff,
    env: { WORKERS: '1', UPSTREAM_DEDUPE: 'false', UPSTREAM_CONTRACT_SAMPLE: '0' },
    scenarios: [1, 2, 3],
    connections: [10],
    latencies: [0],
    quick: true,
  },
  {
    label: CONTENDER.contractAll,
    env: { WORKERS: '1', UPSTREAM_DEDUPE: 'false', UPSTREAM_CONTRACT_SAMPLE: '1' },
    scenarios: [1, 2],
    connections: [10],
    latencies: [0],
    quick: true,
  },
  {
    label: CONTENDER.explain,
    env: { WORKERS: '1', UPSTREAM_DEDUPE: 'false', EXPLAIN: 'true' },
    headers: { 'x-gateway-explain': '1' },
    scenarios: [1, 2, 3],
    connections: [10],
    latencies: [0],
    quick: true,
  },
  // Issue 45: demand control with the client budget on (set too high to refuse) and the cost asked
  // for, beside the default (CONTENDER.noDedupe), which estimates every operation's upstream calls
  // but charges no budget. Sharing off, as above, so that each request makes its own calls.
  {
    label: CONTENDER.costBudget,
    env: { WORKERS: '1', UPSTREAM_DEDUPE: 'false', RATE_LIMIT_COST_PER_MINUTE: '100000000' },
    headers: { 'x-gateway-cost': '1' },
    scenarios: [1, 2, 3],
    connections: [10],
    latencies: [0],
    quick: true,
  },
  {
    label: CONTENDER.cache,
    env: { WORKERS: '1', RESPONSE_CACHE_TTL_MS: '60000' },
    scenarios: [1],
    connections: [10],
    quick: false,
  },
  // Issue 13: the cache and rate limits in this process, and in Redis. The limits are set high
  // enough never to refuse: what is measured is what checking them costs.
  {
    label: CONTENDER.cacheLimited,
    env: { WORKERS: '1', ...CACHE_AND_LIMITS },
    scenarios: [1],
    connections: [10],
    latencies: [5],
    quick: true,
  },
  {
    label: CONTENDER.cacheRedis,
    env: { WORKERS: '1', ...CACHE_AND_LIMITS },
    redis: true,
    scenarios: [1],
    connections: [10],
    latencies: [5],
    quick: true,
  },
];
const variants = (): readonly GatewayVariant[] =>
  ALL_VARIANTS.filter(
    (variant) =>
      (!QUICK || variant.quick) &&
      (!variant.redis || redisUrl !== undefined) &&
      SELECTED.some((scenario) => variant.scenarios.includes(scenario.id)),
  );
const variant = (label: string) => variants().find((each) => each.label === label);

const GRAPHQL_JSON = { 'content-type': 'application/json', accept: 'application/json' };
const GRAPHQL_HEADERS = { ...GRAPHQL_JSON, ...CREDENTIAL_HEADERS };

function graphqlContender(
  label: string,
  kind: 'gateway' | 'ceiling',
  url: string,
  pid: number,
  scenarios: readonly number[],
  connections?: readonly number[],
  headers?: Record<string, string>,
  trusted = false,
): Contender {
  return {
    label,
    kind,
    pid,
    target: (scenario) => ({
      url,
      method: 'POST',
      headers: { ...GRAPHQL_HEADERS, ...headers },
      body: trusted ? persistedBody(scenario.graphql) : scenario.graphql,
    }),
    applies: (scenario, at) =>
      scenarios.includes(scenario.id) && (at === undefined || connections === undefined || connections.includes(at)),
  };
}

function directContender(petstoreUrl: string, clientUrl: string): Contender {
  const origin = new URL(petstoreUrl).origin;
  return {
    label: 'direct',
    kind: 'direct',
    target: (scenario) =>
      scenario.direct.kind === 'rest'
        ? {
            url: origin + scenario.direct.path,
            method: 'GET',
            headers: { accept: 'application/json', ...scenario.direct.headers },
          }
        : { url: clientUrl + scenario.direct.path, method: 'GET', headers: {} },
    applies: () => true,
  };
}

/** Starts one gateway per variant that runs at this upstream latency, each with its contender. */
async function startVariants(
  name: string,
  env: Record<string, string>,
  latencyMs: number | undefined,
  children: Child[],
): Promise<{ variant: GatewayVariant; gateway: Child & { url: string }; contender: Contender }[]> {
  const out: { variant: GatewayVariant; gateway: Child & { url: string }; contender: Contender }[] = [];
  for (const each of variants()) {
    if (latencyMs !== undefined && each.latencies !== undefined && !each.latencies.includes(latencyMs)) continue;
    const redis: Record<string, string> = each.redis && redisUrl !== undefined ? { REDIS_URL: redisUrl } : {};
    // A gateway of trusted documents refuses the usual start-up probe (a document text): it is asked a scenario by hash.
    const first = SCENARIOS[0];
    const probe =
      each.trusted && first ? { probe: { body: persistedBody(first.graphql), headers: CREDENTIAL_HEADERS } } : {};
    const gateway = await startGateway(
      `${name} ${each.label}`,
      { ...env, ...each.env, ...redis },
      {
        ...probe,
        ...(each.baseline && BASELINE ? { node: BASELINE.node } : {}),
        ...(each.baseline === 'build' && baselineBuild ? { root: baselineBuild.root } : {}),
      },
    );
    children.push(gateway);
    const scenarios = (latencyMs === undefined ? undefined : each.scenariosAt?.[latencyMs]) ?? each.scenarios;
    out.push({
      variant: each,
      gateway,
      contender: graphqlContender(
        each.label,
        'gateway',
        gateway.url,
        gateway.pid,
        scenarios,
        each.connections,
        each.headers,
        each.trusted,
      ),
    });
  }
  return out;
}

/** The scenarios the framework ceiling runs: those of issue 11. */
const CEILING_SCENARIOS: readonly number[] = [1, 2, 3, 4];

/** Starts the framework ceiling (`bench/ceiling.ts`) with the gateways' settings, as a contender of its scenarios. */
async function startCeiling(env: Record<string, string>, children: Child[]): Promise<Contender> {
  const ceiling = await startReportingChild<{ url: string }>('ceiling', 'bench/ceiling.ts', [], {
    ...env,
    HOST: '127.0.0.1',
    PORT: '0',
  });
  children.push(ceiling);
  return graphqlContender('ceiling', 'ceiling', ceiling.info.url, ceiling.pid, CEILING_SCENARIOS);
}

/** The scenarios the least Node.js proxy serves: the single REST calls (bench/least-proxy.ts). */
const LEAST_PROXY_SCENARIOS = [1, 2];

/**
 * The least Node.js proxy (bench/least-proxy.ts), at 10 connections: the floor under any gateway
 * on this runtime and machine, beside direct REST.
 */
async function startLeastProxy(petstoreUrl: string, children: Child[]): Promise<Contender> {
  const proxy = await startReportingChild<{ url: string }>('least proxy', 'bench/least-proxy.ts', [petstoreUrl]);
  children.push(proxy);
  return {
    label: LEAST_PROXY,
    kind: 'least proxy',
    pid: proxy.pid,
    target: (scenario) => ({
      url: proxy.info.url,
      method: 'POST',
      // The credential the REST call needs, as direct REST sends it.
      headers:
        scenario.direct.kind === 'rest'
          ? { ...GRAPHQL_JSON, ...scenario.direct.headers, 'x-rest-path': scenario.direct.path }
          : GRAPHQL_JSON,
      body: scenario.graphql,
    }),
    applies: (scenario, at) => LEAST_PROXY_SCENARIOS.includes(scenario.id) && (at === undefined || at === 10),
  };
}

/** Sends one request of a scenario to a contender and checks the answer, before anything is measured. */
async function check(contender: Contender, scenario: Scenario): Promise<void> {
  const target = contender.target(scenario);
  const response = await fetch(target.url, {
    method: target.method,
    headers: target.headers,
    ...(target.body !== undefined ? { body: target.body } : {}),
  });
  const text = await response.text();
  if (!response.ok)
    throw new Error(`${contender.label}, scenario ${scenario.id}: status ${response.status}: ${text.slice(0, 300)}`);
  if (contender.kind === 'direct' || contender.kind === 'least proxy') return;
  const result = JSON.parse(text) as { data?: unknown; errors?: unknown };
  const problem =
    result.errors !== undefined ? `errors ${JSON.stringify(result.errors).slice(0, 300)}` : scenario.check(result.data);
  if (problem !== undefined) throw new Error(`${contender.label}, scenario ${scenario.id}: ${problem}`);
}

/**
 * Upstream calls per request and how many ran at once: each contender in front of an emulator
 * that records its requests (5 ms latency, so that concurrent calls overlap), a few requests
 * each, one at a time, after one warm-up request.
 */
async function countCalls(): Promise<CallCount[]> {
  console.log('measuring upstream calls per request');
  const emulator = await startEmulator({ latencyMs: 5, recordRequests: true });
  const children: Child[] = [];
  try {
    await seedUpstream(emulator.petstoreUrl);
    const env = { ...PRODUCTION_ENV, PETSTORE_URL: emulator.petstoreUrl, PLANTS_URL: emulator.plantsUrl };
    const contenders: Contender[] = (await startVariants('count', env, undefined, children)).map(
      (each) => each.contender,
    );
    contenders.push(await startCeiling(env, children));
    const client = await startReportingChild<{ url: string }>('direct client', 'bench/direct-client.ts', [
      emulator.petstoreUrl,
    ]);
    children.push(client);
    contenders.push(directContender(emulator.petstoreUrl, client.info.url));

    const counts: CallCount[] = [];
    const repeats = 4;
    for (const scenario of SCENARIOS) {
      for (const contender of contenders.filter((each) => each.applies(scenario))) {
        await check(contender, scenario);
        emulator.clearRequests();
        for (let index = 0; index < repeats; index += 1) await check(contender, scenario);
        // The direct REST call of scenarios 1 and 2 is itself the upstream call.
        const calls = emulator.requests.length / repeats;
        counts.push({ scenario: scenario.id, contender: contender.label, calls, maxConcurrent: emulator.maxInFlight });
        console.log(
          `  s${scenario.id} ${contender.label.padEnd(38)} ${calls} upstream calls/request, at most ${emulator.maxInFlight} at once`,
        );
      }
    }
    return counts;
  } finally {
    for (const child of children.reverse()) await child.stop();
    await emulator.close();
  }
}

/**
 * "50 connections asking the same pet at 20 ms upstream latency": each gateway variant of
 * scenario 1 in front of a recording emulator with 20 ms latency, driven on 50 connections;
 * upstream calls counted by the emulator over the run, against the queries answered.
 */
async function samePet(): Promise<SamePetRun[]> {
  console.log(`50 connections asking the same pet, 20 ms upstream, ${PLAN.samePetSeconds} s each`);
  const emulator = await startEmulator({ latencyMs: 20, recordRequests: true });
  const children: Child[] = [];
  const scenario = SCENARIOS.find((each) => each.id === 1) as Scenario;
  try {
    const env = { ...PRODUCTION_ENV, PETSTORE_URL: emulator.petstoreUrl, PLANTS_URL: emulator.plantsUrl };
    const contenders = (await startVariants('same pet', env, undefined, children))
      .map((each) => each.contender)
      .filter((each) => !CACHED.has(each.label) && each.applies(scenario));
    const out: SamePetRun[] = [];
    for (const contender of contenders) {
      await check(contender, scenario);
      await runLoad(contender.target(scenario), { connections: 50, seconds: PLAN.warmupSeconds });
      emulator.clearRequests();
      const result = await runLoad(contender.target(scenario), { connections: 50, seconds: PLAN.samePetSeconds });
      const run: SamePetRun = {
        contender: contender.label,
        answered: result.requests,
        upstreamCalls: emulator.requests.length,
        failures: result.failures,
        seconds: result.seconds,
      };
      emulator.clearRequests();
      console.log(
        `  ${contender.label.padEnd(38)} ${run.answered} answered, ${run.upstreamCalls} upstream calls (${((run.upstreamCalls / Math.max(1, run.answered)) * 100).toFixed(1)}%)`,
      );
      out.push(run);
    }
    return out;
  } finally {
    for (const child of children.reverse()) await child.stop();
    await emulator.close();
  }
}

/** The mixed workload's gateways: the upstream cache off (the default), and on with a default for pet reads. */
const MIXED_CONTENDERS: readonly { label: string; env: Record<string, string> }[] = [
  { label: 'gateway WORKERS=1, UPSTREAM_CACHE=off', env: { WORKERS: '1' } },
  {
    label: 'gateway WORKERS=1, UPSTREAM_CACHE=getPetById:30s',
    env: { WORKERS: '1', UPSTREAM_CACHE: 'getPetById:30s' },
  },
];

/** Each operation of the mixed workload's cycle answers without errors, before anything is measured. */
async function checkMixed(targets: readonly Target[]): Promise<void> {
  for (const target of targets) {
    const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body });
    const answer = (await response.json()) as { errors?: unknown[] };
    if (!response.ok || answer.errors !== undefined)
      throw new Error(`mixed workload: ${target.body ?? ''} answered ${response.status} ${JSON.stringify(answer)}`);
  }
}

/**
 * Issue 23's mixed workload: 80% reads of 100 pets and 20% renames (`mixedWorkload`), on 10
 * connections, each gateway in front of a recording emulator with 5 ms latency; answers per
 * second and upstream calls over the run, the upstream cache off and on.
 */
async function mixed(): Promise<MixedRun[]> {
  console.log(`mixed workload (80% reads of 100 pets, 20% updates), 5 ms upstream, ${PLAN.samePetSeconds} s each`);
  const emulator = await startEmulator({ latencyMs: 5, recordRequests: true });
  const children: Child[] = [];
  try {
    await seedUpstream(emulator.petstoreUrl);
    await seedMixedPets(emulator.petstoreUrl);
    const env = { ...PRODUCTION_ENV, PETSTORE_URL: emulator.petstoreUrl, PLANTS_URL: emulator.plantsUrl };
    const out: MixedRun[] = [];
    for (const contender of MIXED_CONTENDERS) {
      const gateway = await startGateway(`mixed ${contender.label}`, { ...env, ...contender.env });
      children.push(gateway);
      const targets: Target[] = mixedWorkload().map((each) => ({
        url: gateway.url,
        method: 'POST',
        headers: GRAPHQL_HEADERS,
        body: each.body,
      }));
      await checkMixed(targets);
      await runLoad(targets, { connections: 10, seconds: PLAN.warmupSeconds });
      emulator.clearRequests();
      const result = await runLoad(targets, { connections: 10, seconds: PLAN.samePetSeconds });
      const run: MixedRun = {
        contender: contender.label,
        answered: result.requests,
        upstreamCalls: emulator.requests.length,
        failures: result.failures,
        seconds: result.seconds,
      };
      emulator.clearRequests();
      console.log(
        `  ${contender.label.padEnd(50)} ${(run.answered / run.seconds).toFixed(0)} req/s, ${run.upstreamCalls} upstream calls for ${run.answered} answers`,
      );
      out.push(run);
    }
    return out;
  } finally {
    for (const child of children.reverse()) await child.stop();
    await emulator.close();
  }
}

/** The contract check's settings measured from within (issue 22): its default sample, and every answer. */
const CONTRACT_SAMPLES: readonly { label: string; sample: string | undefined }[] = [
  { label: 'default (UPSTREAM_CONTRACT_SAMPLE unset, 0.01)', sample: undefined },
  { label: 'every answer (UPSTREAM_CONTRACT_SAMPLE=1)', sample: '1' },
];

/** The sum of a counter's samples in a gateway's /metrics. */
async function counterSum(graphqlUrl: string, name: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', graphqlUrl))).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/**
 * Issue 22: what the contract check costs, measured from within. Each setting's gateway (WORKERS=1,
 * sharing off, 0 ms upstream) answers scenarios 1 and 2 on 10 connections; the time its checks
 * took (`upstream_contract_check_seconds_total`) is set against its CPU time over the same run:
 * unlike two gateways' CPU per request, which differ by process, it measures the checks alone.
 */
async function contractCheckCost(): Promise<ContractCheckRun[]> {
  console.log(`contract check cost, ${PLAN.samePetSeconds} s per scenario and setting`);
  const emulator = await startEmulator({ latencyMs: 0, recordRequests: false });
  const children: Child[] = [];
  try {
    await seedUpstream(emulator.petstoreUrl);
    const out: ContractCheckRun[] = [];
    for (const setting of CONTRACT_SAMPLES) {
      const gateway = await startGateway(`contract ${setting.label}`, {
        ...PRODUCTION_ENV,
        PETSTORE_URL: emulator.petstoreUrl,
        PLANTS_URL: emulator.plantsUrl,
        WORKERS: '1',
        UPSTREAM_DEDUPE: 'false',
        ...(setting.sample === undefined ? {} : { UPSTREAM_CONTRACT_SAMPLE: setting.sample }),
      });
      children.push(gateway);
      for (const scenario of SCENARIOS.filter((each) => each.id === 1 || each.id === 2)) {
        const target: Target = { url: gateway.url, method: 'POST', headers: GRAPHQL_HEADERS, body: scenario.graphql };
        await runLoad(target, { connections: 10, seconds: PLAN.warmupSeconds });
        const checkedBefore = await counterSum(gateway.url, 'upstream_contract_check_seconds_total');
        const cpuBefore = cpuTicksOf([gateway.pid]);
        const result = await runLoad(target, { connections: 10, seconds: PLAN.samePetSeconds });
        const cpuMs = cpuMsBetween(cpuBefore, cpuTicksOf([gateway.pid]));
        const checkMs =
          ((await counterSum(gateway.url, 'upstream_contract_check_seconds_total')) - checkedBefore) * 1000;
        const run = { setting: setting.label, scenario: scenario.id, requests: result.requests, cpuMs, checkMs };
        console.log(
          `  s${scenario.id} ${setting.label}: ${((checkMs * 1000) / Math.max(1, run.requests)).toFixed(2)} µs of checks per request, ${(cpuMs / Math.max(1, run.requests)).toFixed(3)} ms CPU per request`,
        );
        out.push(run);
      }
    }
    return out;
  } finally {
    for (const child of children.reverse()) await child.stop();
    await emulator.close();
  }
}

/** Live queries held open at rest (issue 23): one per pet 1–100, polled at the default interval. */
const LIVE_AT_REST = { queries: MIXED_PETS, pollIntervalMs: 5000 };

/** A live query held open over server-sent events, once its first result has arrived. */
async function openLiveQuery(url: string, petId: number): Promise<AbortController> {
  const controller = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...CREDENTIAL_HEADERS },
    body: JSON.stringify({ query: `query Live @live { pet(id: ${petId}) { id name status } }` }),
    signal: controller.signal,
  });
  const reader = response.body?.getReader();
  let seen = '';
  while (reader && !seen.includes('"isLive":true')) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += new TextDecoder().decode(value);
  }
  if (!response.ok || !seen.includes('"isLive":true'))
    throw new Error(`live query on pet ${petId}: ${response.status} ${seen.slice(0, 200)}`);
  return controller;
}

/** The gateway's CPU time, resident set and the upstream's calls over `seconds` of rest. */
async function atRest(
  liveQueries: number,
  gateway: Child,
  emulator: { requests: readonly unknown[]; clearRequests(): void },
  seconds: number,
): Promise<LiveAtRestRun> {
  emulator.clearRequests();
  const before = cpuTicksOf([gateway.pid]);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const cpuMs = cpuMsBetween(before, cpuTicksOf([gateway.pid]));
  return { liveQueries, seconds, cpuMs, rssBytes: memoryOf(gateway.pid).rss, upstreamCalls: emulator.requests.length };
}

/**
 * Issue 23: what live queries cost while nothing changes. One gateway (WORKERS=1, LIVE_QUERIES=true,
 * the default polling interval) in front of a recording emulator: CPU time, resident set and
 * upstream calls over a window of rest with no live query, then with {@link LIVE_AT_REST}'s open
 * over server-sent events (each on its own pet, the same credential), each window longer than
 * three polling intervals.
 */
async function liveAtRest(): Promise<LiveAtRestRun[]> {
  const seconds = QUICK ? 6 : 20;
  console.log(`live queries at rest: none, then ${LIVE_AT_REST.queries}, ${seconds} s each`);
  const emulator = await startEmulator({ latencyMs: 0, recordRequests: true });
  const children: Child[] = [];
  const open: AbortController[] = [];
  try {
    await seedUpstream(emulator.petstoreUrl);
    await seedMixedPets(emulator.petstoreUrl);
    const gateway = await startGateway('live at rest', {
      ...PRODUCTION_ENV,
      PETSTORE_URL: emulator.petstoreUrl,
      PLANTS_URL: emulator.plantsUrl,
      WORKERS: '1',
      LIVE_QUERIES: 'true',
      LIVE_QUERIES_PER_CLIENT_MAX: String(LIVE_AT_REST.queries),
      LIVE_POLL_INTERVAL_MS: String(LIVE_AT_REST.pollIntervalMs),
    });
    children.push(gateway);
    const idle = await atRest(0, gateway, emulator, seconds);
    for (let id = 1; id <= LIVE_AT_REST.queries; id += 1) open.push(await openLiveQuery(gateway.url, id));
    const held = await atRest(LIVE_AT_REST.queries, gateway, emulator, seconds);
    for (const run of [idle, held])
      console.log(
        `  ${run.liveQueries} live queries: ${(run.cpuMs / run.seconds).toFixed(1)} ms CPU/s, RSS ${(run.rssBytes / 2 ** 20).toFixed(0)} MB, ${run.upstreamCalls} upstream calls`,
      );
    return [idle, held];
  } finally {
    for (const controller of open) controller.abort();
    for (const child of children.reverse()) await child.stop();
    await emulator.close();
  }
}

/**
 * Start to first answer and idle memory, with WORKERS=1 and WORKERS=auto, `PLAN.starts` times
 * each (alternating): the time from the spawn of `node … dist/main.js` until the first answer
 * to scenario 1 (one pet by id, polled every 10 ms); then, 2 s after that one request, the
 * resident set size of each process of the gateway's tree.
 */
async function startup(env: Record<string, string>): Promise<StartupRun[]> {
  console.log(`start to first answer, ${PLAN.starts} starts each`);
  const scenario = SCENARIOS.find((each) => each.id === 1) as Scenario;
  // WORKERS=1 on the baseline runtime too: where the runtime alone moves idle memory.
  const starters: { label: string; settings: Record<string, string>; node?: string }[] = [
    { label: CONTENDER.workers1, settings: variant(CONTENDER.workers1)?.env ?? {} },
    { label: CONTENDER.auto, settings: variant(CONTENDER.auto)?.env ?? {} },
    ...(BASELINE === undefined
      ? []
      : [
          {
            label: `${CONTENDER.workers1}, Node ${major(BASELINE.version)}`,
            settings: { WORKERS: '1' },
            node: BASELINE.node,
          },
        ]),
  ];
  const runs = new Map<string, StartupRun>(
    starters.map(({ label }) => [label, { contender: label, startsMs: [], idleRss: [], processes: 0 }]),
  );
  for (let start = 0; start < PLAN.starts; start += 1) {
    for (const { label, settings, node } of start % 2 === 0 ? starters : [...starters].reverse()) {
      const gateway = await startGateway(
        `start ${label} ${start}`,
        { ...env, ...settings },
        { probe: { body: scenario.graphql, headers: CREDENTIAL_HEADERS }, ...(node ? { node } : {}) },
      );
      try {
        await new Promise((resolve) => setTimeout(resolve, 2000));
        const tree = processTree(gateway.pid);
        const run = runs.get(label) as StartupRun;
        run.startsMs.push(gateway.startupMs);
        run.idleRss.push(Math.max(...tree.map((pid) => memoryOf(pid).rss)));
        run.processes = Math.max(run.processes, tree.length);
        console.log(
          `  ${label.padEnd(38)} first answer after ${gateway.startupMs.toFixed(0)} ms; idle RSS ${tree.map((pid) => (memoryOf(pid).rss / 2 ** 20).toFixed(0)).join(' + ')} MB (${tree.length} process(es))`,
        );
      } finally {
        await gateway.stop();
      }
    }
  }
  return [...runs.values()];
}

/** One phase: every scenario and concurrency at one upstream latency. */
async function phase(latencyMs: number, results: ResultsInput): Promise<void> {
  console.log(`upstream latency ${latencyMs} ms`);
  const children: Child[] = [];
  try {
    const emulator = await startReportingChild<{ petstoreUrl: string; plantsUrl: string }>(
      `emulator ${latencyMs} ms`,
      'bench/emulator.ts',
      [String(latencyMs)],
    );
    children.push(emulator);
    await seedUpstream(emulator.info.petstoreUrl);
    const env = { ...PRODUCTION_ENV, PETSTORE_URL: emulator.info.petstoreUrl, PLANTS_URL: emulator.info.plantsUrl };
    // Starts first, while no other gateway is running, against the 0 ms upstream.
    if (latencyMs === 0 && ONLY === undefined) results.startup = await startup(env);
    const client = await startReportingChild<{ url: string }>('direct client', 'bench/direct-client.ts', [
      emulator.info.petstoreUrl,
    ]);
    children.push(client);
    const gateways = await startVariants(`${latencyMs}ms`, env, latencyMs, children);
    const contenders: Contender[] = [
      directContender(emulator.info.petstoreUrl, client.info.url),
      ...gateways.map((each) => each.contender),
    ];
    if (SELECTED.some((scenario) => LEAST_PROXY_SCENARIOS.includes(scenario.id)))
      contenders.push(await startLeastProxy(emulator.info.petstoreUrl, children));
    // The ceiling makes no upstream call once warm, so the upstream's latency does not change it: run at 0 ms only.
    if (latencyMs === 0 && SELECTED.some((scenario) => CEILING_SCENARIOS.includes(scenario.id))) {
      contenders.push(await startCeiling(env, children));
    }
    for (const scenario of SELECTED)
      for (const contender of contenders) if (contender.applies(scenario)) await check(contender, scenario);
    for (const { variant: each, gateway } of gateways)
      console.log(`  ${each.label}: ${processTree(gateway.pid).length} process(es)`);

    for (const scenario of SELECTED) {
      for (const connections of PLAN.connections) {
        results.measurements.push(...(await compare(contenders, scenario, latencyMs, connections, PLAN)));
      }
    }

    // One scenario's rows (--scenario=N) leave out the measures that run every scenario.
    if (latencyMs === 5 && PLAN.singleRounds > 0 && ONLY === undefined)
      results.singleClient.push(...(await singleClient(contenders)));
    if (latencyMs === 0 && ONLY === undefined) {
      const main = gateways.find((each) => each.variant.label === CONTENDER.auto);
      if (main !== undefined) results.steady = await steady(main.variant.label, main.gateway);
    }
    // VmHWM: each process's peak over its life, which here is every scenario of this phase.
    for (const { variant: each, gateway } of gateways) {
      const processes: ProcessPeak[] = processTree(gateway.pid).map((pid, index) => ({
        role: index === 0 ? 'primary' : 'worker',
        bytes: memoryOf(pid).peak,
      }));
      results.peakRss.push({ contender: each.label, latencyMs, processes });
    }
  } finally {
    // Contenders first, the upstream last, so that nothing in flight meets a closed upstream.
    for (const child of children.reverse()) await child.stop();
  }
}

/** One client, one request at a time: the latency of a fan-out as a user sees it (scenarios 3 and 4). */
async function singleClient(contenders: readonly Contender[]): Promise<SingleClient[]> {
  const chosen = contenders.filter(
    (contender) =>
      contender.label === CONTENDER.workers1 || contender.label === CONTENDER.auto || contender.kind === 'direct',
  );
  const out: SingleClient[] = [];
  for (const scenario of SCENARIOS.filter((each) => each.id === 3 || each.id === 4)) {
    const latencies = new Map<string, number[]>(chosen.map((contender) => [contender.label, []]));
    for (const contender of chosen)
      await runLoad(contender.target(scenario), { connections: 1, seconds: PLAN.warmupSeconds });
    for (let round = 0; round < PLAN.singleRounds; round += 1) {
      for (const contender of round % 2 === 0 ? chosen : [...chosen].reverse()) {
        const result = await runLoad(contender.target(scenario), { connections: 1, seconds: PLAN.singleSeconds });
        latencies.get(contender.label)?.push(...result.latencies);
      }
    }
    for (const contender of chosen) {
      const values = latencies.get(contender.label) ?? [];
      const entry: SingleClient = {
        scenario: scenario.id,
        contender: contender.label,
        p50: percentile(values, 50),
        p99: percentile(values, 99),
        mean: values.reduce((sum, value) => sum + value, 0) / values.length,
      };
      console.log(
        `  single client s${scenario.id} ${contender.label.padEnd(38)} p50 ${entry.p50.toFixed(2)} ms  p99 ${entry.p99.toFixed(2)} ms  mean ${entry.mean.toFixed(2)} ms`,
      );
      out.push(entry);
    }
  }
  return out;
}

/**
 * Steady load on the gateway (the four scenarios in turn on each of 10 connections, 0 ms
 * upstream) for `steadySeconds`; the resident set size of its processes together sampled every second.
 */
async function steady(label: string, gateway: Child & { url: string }): Promise<SteadyRun> {
  console.log(`steady load on ${label} for ${PLAN.steadySeconds} s`);
  const tree = processTree(gateway.pid);
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(tree.reduce((sum, pid) => sum + memoryOf(pid).rss, 0)), 1000);
  const targets = SCENARIOS.map((scenario) => ({
    url: gateway.url,
    method: 'POST' as const,
    headers: GRAPHQL_HEADERS,
    body: scenario.graphql,
  }));
  const result = await runLoad(targets, { connections: 10, seconds: PLAN.steadySeconds, watchPids: tree });
  clearInterval(sampler);
  const run: SteadyRun = {
    contender: label,
    processes: tree.length,
    seconds: PLAN.steadySeconds,
    requests: result.requests,
    failures: result.failures,
    samples,
    peak: result.peakRss,
  };
  console.log(
    `  ${result.requests} requests; RSS ${samples.map((bytes) => (bytes / 2 ** 20).toFixed(0)).join(' ')} MB`,
  );
  return run;
}

/** `--latency=N`: the upstream latency of `--profile` (0 ms by default). */
const PROFILE_LATENCY_MS = Number(option('latency') ?? '0');

/**
 * `--profile`: one CPU profile of the compiled gateway (WORKERS=1, sharing off) per scenario, 0 ms
 * upstream (`--latency=N` for another), 10 connections.
 */
async function profile(): Promise<void> {
  // Unbundled, so that the profile names our modules rather than the bundle's chunks.
  buildGateway({ modules: true });
  const dir = new URL('profiles/', OUTPUT_DIR);
  mkdirSync(dir, { recursive: true });
  const emulator = await startReportingChild<{ petstoreUrl: string; plantsUrl: string }>(
    'emulator',
    'bench/emulator.ts',
    [String(PROFILE_LATENCY_MS)],
  );
  try {
    await seedUpstream(emulator.info.petstoreUrl);
    // Sharing off: the bench's connections ask the same thing, and a shared call hides a request's own cost.
    const env = {
      ...PRODUCTION_ENV,
      WORKERS: '1',
      UPSTREAM_DEDUPE: 'false',
      PETSTORE_URL: emulator.info.petstoreUrl,
      PLANTS_URL: emulator.info.plantsUrl,
    };
    for (const scenario of SELECTED) {
      const name = `scenario-${scenario.id}`;
      // One directory per scenario: the profile is written there when the gateway exits.
      const gateway = await startGateway(`profile ${name}`, env, {
        nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${new URL(`${name}/`, dir).pathname}`],
      });
      const contender = graphqlContender('gateway', 'gateway', gateway.url, gateway.pid, [scenario.id]);
      await check(contender, scenario);
      const result = await measuredRun(contender, contender.target(scenario), 10, 10);
      console.log(
        `  ${name}: ${(result.requests / result.seconds).toFixed(0)} req/s, ${(result.cpuMs / Math.max(1, result.requests)).toFixed(3)} ms CPU/request while profiling`,
      );
      await gateway.stop();
    }
  } finally {
    await emulator.stop();
  }
  const summary = summariseProfiles(dir);
  writeFileSync(new URL('summary.md', dir), summary);
  console.log(summary);
}

function gitDescription(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench', 'package.json'], {
        encoding: 'utf8',
      }).trim() !== '';
    return `${commit}${dirty ? ' with uncommitted changes' : ''}`;
  } catch {
    return 'unknown';
  }
}

/** `--faults`: the faults under load only (bench/.out/RESULTS.faults.md). */
async function faultsOnly(): Promise<void> {
  buildGateway();
  const runs = await faultRuns(PLAN.faultSeconds);
  const file = new URL('RESULTS.faults.md', OUTPUT_DIR);
  mkdirSync(OUTPUT_DIR, { recursive: true });
  writeFileSync(file, [`Run of ${gitDescription()} on ${RUNTIME.version}.`, '', ...renderFaults(runs)].join('\n'));
  console.log(`written to ${file.pathname}`);
}

/** `--mcp`: an MCP tool call against the same GraphQL request only (bench/.out/RESULTS.mcp.md). */
async function mcpOnly(): Promise<void> {
  buildGateway();
  const cost = await mcpCost(PLAN.mcp);
  const file = new URL('RESULTS.mcp.md', OUTPUT_DIR);
  mkdirSync(OUTPUT_DIR, { recursive: true });
  writeFileSync(
    file,
    [
      `Run of ${gitDescription()} on ${RUNTIME.version}${QUICK ? ' (quick run)' : ''}.`,
      '',
      ...renderMcpCost(cost),
    ].join('\n'),
  );
  console.log(`written to ${file.pathname}`);
}

/** `--mcp --profile`: a CPU profile of the gateway answering each way only, 10 s each (bench/.out/profiles/mcp/). */
async function mcpProfileOnly(): Promise<void> {
  // Unbundled, so that the profile names our modules rather than the bundle's chunks.
  buildGateway({ modules: true });
  console.log(await mcpProfiles(10));
}

async function main(): Promise<void> {
  if (PROFILE && MCP) return mcpProfileOnly();
  if (PROFILE) return profile();
  if (argv.includes('--faults')) return faultsOnly();
  if (MCP) return mcpOnly();
  const started = Date.now();
  buildGateway();
  if (BASELINE_REF !== undefined && BASELINE !== undefined)
    baselineBuild = { ...buildBaseline(BASELINE_REF), label: `${BASELINE.label}, build of ${BASELINE_REF}` };
  writeTrustedManifest();
  const redis = await startRedisServer().catch((): RedisServer | undefined => undefined);
  if (redis) redisUrl = redis.url;
  else console.log('redis-server is not installed (apt-get install redis-server): no Redis rows');
  try {
    const results: ResultsInput = {
      quick: QUICK,
      date: new Date().toISOString(),
      cores: cpus().length,
      cpu: cpus()[0]?.model ?? 'unknown',
      node: RUNTIME.version,
      loadGenerator: process.version,
      ...(BASELINE
        ? {
            baseline: {
              version: BASELINE.version,
              label: BASELINE.label,
              ...(baselineBuild ? { build: { commit: baselineBuild.commit, label: baselineBuild.label } } : {}),
            },
          }
        : {}),
      commit: gitDescription(),
      startCommand: `node ${startArguments().join(' ')}`,
      clockTicks: CLOCK_TICKS,
      plan: PLAN,
      startup: [],
      calls: ONLY === undefined ? await countCalls() : [],
      samePet: ONLY === undefined ? await samePet() : [],
      mixed: ONLY === undefined ? await mixed() : [],
      liveAtRest: ONLY === undefined ? await liveAtRest() : [],
      contractCheck: ONLY === undefined ? await contractCheckCost() : [],
      mcpCost: ONLY === undefined ? await mcpCost(PLAN.mcp) : undefined,
      faults: ONLY === undefined ? await faultRuns(PLAN.faultSeconds) : [],
      ...(existsSync(LATENCY_BUDGET) ? { budget: readFileSync(LATENCY_BUDGET, 'utf8') } : {}),
      measurements: [],
      singleClient: [],
      steady: undefined,
      peakRss: [],
      durationSeconds: 0,
    };
    for (const latencyMs of PLAN.latencies) await phase(latencyMs, results);
    results.durationSeconds = (Date.now() - started) / 1000;
    const file =
      ONLY !== undefined
        ? new URL(`RESULTS.scenario-${ONLY}${QUICK ? '.quick' : ''}.md`, OUTPUT_DIR)
        : QUICK
          ? new URL('RESULTS.quick.md', OUTPUT_DIR)
          : new URL('./RESULTS.md', import.meta.url);
    mkdirSync(OUTPUT_DIR, { recursive: true });
    writeFileSync(file, renderResults(results));
    console.log(`written to ${file.pathname} in ${results.durationSeconds.toFixed(0)} s`);
  } finally {
    // Also when a phase fails: no redis-server is left behind.
    await redis?.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
