/**
 * `npm run bench`: the gateway against direct REST calls and against the framework ceiling,
 * scenario by scenario, at two upstream latencies and two concurrencies, with contenders
 * alternating run by run so that machine drift cancels out. Writes `bench/RESULTS.md`.
 *
 *   npm run bench                  full run (about 12 minutes)
 *   npm run bench -- --quick       under a minute, for development (written to bench/.out/RESULTS.quick.md)
 *   npm run bench -- --profile     CPU profiles of the gateway per scenario (bench/.out/profiles/)
 *
 * Processes: the load generator (this one, autocannon), the upstream (the emulator, with a
 * fixed added latency), the gateway (`node --import tsx src/main.ts`, as `npm start`), the
 * framework ceiling (`bench/ceiling.ts`) and the direct fan-out client (`bench/direct-client.ts`),
 * each in its own process.
 */
import { cpus } from 'node:os';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { startEmulator } from '../src/emulator/server.js';
import { memoryOf, OUTPUT_DIR, startGateway, startReportingChild, type Child } from './children.js';
import { percentile, runLoad, type RunResult, type Target } from './load.js';
import { summariseProfiles } from './profile.js';
import { renderResults, type CallCount, type Measurement, type ResultsInput, type SingleClient, type SteadyRun } from './report.js';
import { CREDENTIAL_HEADERS, SCENARIOS, seedUpstream, type Scenario } from './scenarios.js';

const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const PROFILE = argv.includes('--profile');

/** How long and how often; the full run is what `bench/RESULTS.md` holds. */
const PLAN = QUICK
  ? { latencies: [0, 5], connections: [10], seconds: 1, rounds: 1, warmupSeconds: 0.3, singleSeconds: 1, singleRounds: 1, steadySeconds: 4 }
  : { latencies: [0, 5], connections: [10, 50], seconds: 4, rounds: 3, warmupSeconds: 1, singleSeconds: 3, singleRounds: 2, steadySeconds: 60 };

/**
 * Settings of every gateway process (and of the ceiling): the defaults, but without the
 * per-client rate limits, which exist to stop one client from taking the gateway over, and
 * would turn a load test from one address into a test of the limiter.
 */
const BENCH_ENV = { RATE_LIMIT_PER_MINUTE: '0', RATE_LIMIT_ADDRESS_PER_MINUTE: '0' };

/** The gateway as shipped (default settings), and the variants shown beside it. */
type GatewayVariant = { label: string; env: Record<string, string>; scenarios: readonly number[]; connections?: readonly number[] };
const ALL_VARIANTS: readonly GatewayVariant[] = [
  { label: 'gateway', env: {}, scenarios: [1, 2, 3, 4] },
  { label: 'gateway + response cache', env: { RESPONSE_CACHE_TTL_MS: '60000' }, scenarios: [1] },
  // What the access log (one line per request, listing its upstream calls, at info) costs.
  { label: 'gateway, LOG_LEVEL=warn', env: { LOG_LEVEL: 'warn' }, scenarios: [1, 2, 3, 4], connections: [10] },
];
const VARIANTS = ALL_VARIANTS.filter((variant) => !QUICK || variant.label !== 'gateway, LOG_LEVEL=warn');

type Contender = {
  label: string;
  kind: 'direct' | 'gateway' | 'ceiling';
  pid?: number;
  target(scenario: Scenario): Target;
  applies(scenario: Scenario, connections?: number): boolean;
};

const GRAPHQL_HEADERS = { 'content-type': 'application/json', accept: 'application/json', ...CREDENTIAL_HEADERS };

function graphqlContender(label: string, kind: 'gateway' | 'ceiling', url: string, pid: number, scenarios: readonly number[], connections?: readonly number[]): Contender {
  return {
    label,
    kind,
    pid,
    target: (scenario) => ({ url, method: 'POST', headers: GRAPHQL_HEADERS, body: scenario.graphql }),
    applies: (scenario, at) => scenarios.includes(scenario.id) && (at === undefined || connections === undefined || connections.includes(at)),
  };
}

function directContender(petstoreUrl: string, clientUrl: string): Contender {
  const origin = new URL(petstoreUrl).origin;
  return {
    label: 'direct',
    kind: 'direct',
    target: (scenario) =>
      scenario.direct.kind === 'rest'
        ? { url: origin + scenario.direct.path, method: 'GET', headers: { accept: 'application/json', ...scenario.direct.headers } }
        : { url: clientUrl + scenario.direct.path, method: 'GET', headers: {} },
    applies: () => true,
  };
}

/** Sends one request of a scenario to a contender and checks the answer, before anything is measured. */
async function check(contender: Contender, scenario: Scenario): Promise<void> {
  const target = contender.target(scenario);
  const response = await fetch(target.url, { method: target.method, headers: target.headers, ...(target.body !== undefined ? { body: target.body } : {}) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${contender.label}, scenario ${scenario.id}: status ${response.status}: ${text.slice(0, 300)}`);
  if (contender.kind === 'direct') return;
  const result = JSON.parse(text) as { data?: unknown; errors?: unknown };
  const problem = result.errors !== undefined ? `errors ${JSON.stringify(result.errors).slice(0, 300)}` : scenario.check(result.data);
  if (problem !== undefined) throw new Error(`${contender.label}, scenario ${scenario.id}: ${problem}`);
}

/** Runs every applicable contender `rounds` times on one configuration, alternating, and merges the rounds. */
async function compare(contenders: readonly Contender[], scenario: Scenario, latencyMs: number, connections: number, rounds: number, seconds: number): Promise<Measurement[]> {
  const active = contenders.filter((contender) => contender.applies(scenario, connections));
  const runs = new Map<string, RunResult[]>(active.map((contender) => [contender.label, []]));
  for (const contender of active) await runLoad(contender.target(scenario), { connections, seconds: PLAN.warmupSeconds });
  for (let round = 0; round < rounds; round += 1) {
    // Each round starts with a different contender, so none is always first after a pause.
    const order = active.map((_, index) => active[(index + round) % active.length] as Contender);
    for (const contender of order) {
      const watchPid = contender.pid;
      const result = await runLoad(contender.target(scenario), { connections, seconds, ...(watchPid !== undefined ? { watchPid } : {}) });
      runs.get(contender.label)?.push(result);
    }
  }
  return active.map((contender) => {
    const results = runs.get(contender.label) ?? [];
    const latencies = results.flatMap((result) => result.latencies);
    const requests = results.reduce((sum, result) => sum + result.requests, 0);
    const measurement: Measurement = {
      scenario: scenario.id,
      latencyMs,
      connections,
      contender: contender.label,
      kind: contender.kind,
      rps: requests / results.reduce((sum, result) => sum + result.seconds, 0),
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      failures: results.reduce((sum, result) => sum + result.failures, 0),
      peakRss: contender.pid === undefined ? undefined : Math.max(...results.map((result) => result.peakRss)),
    };
    console.log(
      `  s${scenario.id} ${latencyMs}ms c${connections} ${contender.label.padEnd(26)} ${measurement.rps.toFixed(0).padStart(6)} req/s  p50 ${measurement.p50.toFixed(2)} ms  p99 ${measurement.p99.toFixed(2)} ms${measurement.failures ? `  FAILURES ${measurement.failures}` : ''}`,
    );
    return measurement;
  });
}

/**
 * Upstream calls per request and how many ran at once: each contender in front of an emulator
 * that records its requests (5 ms latency, so that concurrent calls overlap), a few requests
 * each after one warm-up request.
 */
async function countCalls(): Promise<CallCount[]> {
  console.log('measuring upstream calls per request');
  const emulator = await startEmulator({ latencyMs: 5, recordRequests: true });
  const children: Child[] = [];
  try {
    await seedUpstream(emulator.petstoreUrl);
    const env = { ...BENCH_ENV, PETSTORE_URL: emulator.petstoreUrl, PLANTS_URL: emulator.plantsUrl };
    const contenders: Contender[] = [];
    for (const variant of VARIANTS) {
      const gateway = await startGateway(`count-${variant.label}`, { ...env, ...variant.env });
      children.push(gateway);
      contenders.push(graphqlContender(variant.label, 'gateway', gateway.url, gateway.pid, variant.scenarios));
    }
    const ceiling = await startReportingChild<{ url: string }>('ceiling', 'bench/ceiling.ts', [], { ...env, HOST: '127.0.0.1', PORT: '0' });
    children.push(ceiling);
    contenders.push(graphqlContender('ceiling', 'ceiling', ceiling.info.url, ceiling.pid, [1, 2, 3, 4]));
    const client = await startReportingChild<{ url: string }>('direct client', 'bench/direct-client.ts', [emulator.petstoreUrl]);
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
        console.log(`  s${scenario.id} ${contender.label.padEnd(26)} ${calls} upstream calls/request, at most ${emulator.maxInFlight} at once`);
      }
    }
    return counts;
  } finally {
    for (const child of children.reverse()) await child.stop();
    await emulator.close();
  }
}

/** One phase: every scenario and concurrency at one upstream latency. */
async function phase(latencyMs: number, results: ResultsInput): Promise<void> {
  console.log(`upstream latency ${latencyMs} ms`);
  const children: Child[] = [];
  try {
    const emulator = await startReportingChild<{ petstoreUrl: string; plantsUrl: string }>(`emulator ${latencyMs} ms`, 'bench/emulator.ts', [String(latencyMs)]);
    children.push(emulator);
    await seedUpstream(emulator.info.petstoreUrl);
    const env = { ...BENCH_ENV, PETSTORE_URL: emulator.info.petstoreUrl, PLANTS_URL: emulator.info.plantsUrl };
    const client = await startReportingChild<{ url: string }>('direct client', 'bench/direct-client.ts', [emulator.info.petstoreUrl]);
    children.push(client);
    const contenders: Contender[] = [directContender(emulator.info.petstoreUrl, client.info.url)];
    const gateways: (Child & { url: string })[] = [];
    for (const variant of VARIANTS) {
      const gateway = await startGateway(`${variant.label} ${latencyMs}ms`, { ...env, ...variant.env });
      children.push(gateway);
      gateways.push(gateway);
      contenders.push(graphqlContender(variant.label, 'gateway', gateway.url, gateway.pid, variant.scenarios, variant.connections));
    }
    // The ceiling makes no upstream call once warm, so the upstream's latency does not change it: run at 0 ms only.
    if (latencyMs === 0) {
      const ceiling = await startReportingChild<{ url: string }>('ceiling', 'bench/ceiling.ts', [], { ...env, HOST: '127.0.0.1', PORT: '0' });
      children.push(ceiling);
      contenders.push(graphqlContender('ceiling', 'ceiling', ceiling.info.url, ceiling.pid, [1, 2, 3, 4]));
    }
    for (const scenario of SCENARIOS) for (const contender of contenders) if (contender.applies(scenario)) await check(contender, scenario);

    for (const scenario of SCENARIOS) {
      for (const connections of PLAN.connections) {
        results.measurements.push(...(await compare(contenders, scenario, latencyMs, connections, PLAN.rounds, PLAN.seconds)));
      }
    }

    if (latencyMs === 5) results.singleClient.push(...(await singleClient(contenders)));
    if (latencyMs === 0) {
      const main = gateways[0];
      if (main !== undefined) results.steady = await steady(main);
    }
    for (const gateway of gateways) {
      const label = VARIANTS[gateways.indexOf(gateway)]?.label ?? gateway.name;
      results.peakRss.push({ contender: label, latencyMs, bytes: memoryOf(gateway.pid).peak });
    }
  } finally {
    // Contenders first, the upstream last, so that nothing in flight meets a closed upstream.
    for (const child of children.reverse()) await child.stop();
  }
}

/** One client, one request at a time: the latency of a fan-out as a user sees it (scenarios 3 and 4). */
async function singleClient(contenders: readonly Contender[]): Promise<SingleClient[]> {
  const chosen = contenders.filter((contender) => contender.label === 'gateway' || contender.kind === 'direct');
  const out: SingleClient[] = [];
  for (const scenario of SCENARIOS.filter((each) => each.id === 3 || each.id === 4)) {
    const latencies = new Map<string, number[]>(chosen.map((contender) => [contender.label, []]));
    for (const contender of chosen) await runLoad(contender.target(scenario), { connections: 1, seconds: PLAN.warmupSeconds });
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
      console.log(`  single client s${scenario.id} ${contender.label.padEnd(10)} p50 ${entry.p50.toFixed(2)} ms  p99 ${entry.p99.toFixed(2)} ms  mean ${entry.mean.toFixed(2)} ms`);
      out.push(entry);
    }
  }
  return out;
}

/**
 * Steady load on the gateway (the four scenarios in turn on each of 10 connections, 0 ms
 * upstream) for `steadySeconds`, its resident set size sampled every second.
 */
async function steady(gateway: Child & { url: string }): Promise<SteadyRun> {
  console.log(`steady load for ${PLAN.steadySeconds} s`);
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(memoryOf(gateway.pid).rss), 1000);
  const targets = SCENARIOS.map((scenario) => ({ url: gateway.url, method: 'POST' as const, headers: GRAPHQL_HEADERS, body: scenario.graphql }));
  const result = await runLoad(targets, { connections: 10, seconds: PLAN.steadySeconds, watchPid: gateway.pid });
  clearInterval(sampler);
  const run: SteadyRun = { seconds: PLAN.steadySeconds, requests: result.requests, failures: result.failures, samples, peak: result.peakRss };
  console.log(`  ${result.requests} requests; RSS ${samples.map((bytes) => (bytes / 2 ** 20).toFixed(0)).join(' ')} MB`);
  return run;
}

/** `--profile`: one CPU profile of the gateway per scenario, 0 ms upstream, 10 connections. */
async function profile(): Promise<void> {
  const dir = new URL('profiles/', OUTPUT_DIR);
  mkdirSync(dir, { recursive: true });
  const emulator = await startReportingChild<{ petstoreUrl: string; plantsUrl: string }>('emulator', 'bench/emulator.ts', ['0']);
  try {
    await seedUpstream(emulator.info.petstoreUrl);
    const env = { ...BENCH_ENV, PETSTORE_URL: emulator.info.petstoreUrl, PLANTS_URL: emulator.info.plantsUrl };
    const only = argv.find((arg) => arg.startsWith('--scenario='))?.slice('--scenario='.length);
    for (const scenario of SCENARIOS.filter((each) => only === undefined || String(each.id) === only)) {
      const name = `scenario-${scenario.id}`;
      // One directory per scenario: tsx's loader thread writes a profile of its own beside the main thread's.
      const gateway = await startGateway(`profile ${name}`, env, { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${new URL(`${name}/`, dir).pathname}`] });
      const contender = graphqlContender('gateway', 'gateway', gateway.url, gateway.pid, [scenario.id]);
      await check(contender, scenario);
      const result = await runLoad(contender.target(scenario), { connections: 10, seconds: 10 });
      console.log(`  ${name}: ${(result.requests / result.seconds).toFixed(0)} req/s while profiling`);
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
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench', 'package.json'], { encoding: 'utf8' }).trim() !== '';
    return `${commit}${dirty ? ' with uncommitted changes' : ''}`;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  if (PROFILE) return profile();
  const started = Date.now();
  const results: ResultsInput = {
    quick: QUICK,
    date: new Date().toISOString(),
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    commit: gitDescription(),
    plan: PLAN,
    calls: await countCalls(),
    measurements: [],
    singleClient: [],
    steady: undefined,
    peakRss: [],
    durationSeconds: 0,
  };
  for (const latencyMs of PLAN.latencies) await phase(latencyMs, results);
  results.durationSeconds = (Date.now() - started) / 1000;
  const file = QUICK ? new URL('RESULTS.quick.md', OUTPUT_DIR) : new URL('./RESULTS.md', import.meta.url);
  mkdirSync(OUTPUT_DIR, { recursive: true });
  writeFileSync(file, renderResults(results));
  console.log(`written to ${file.pathname} in ${results.durationSeconds.toFixed(0)} s`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
