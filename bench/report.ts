/**
 * `bench/RESULTS.md`: the targets of issue 11 with what was measured, for WORKERS=1 and
 * WORKERS=auto side by side, then every run.
 */

/** The gateway contenders, by the label they carry in every table. */
export const CONTENDER = {
  workers1: 'gateway WORKERS=1',
  auto: 'gateway WORKERS=auto',
  noDedupe: 'gateway WORKERS=1, UPSTREAM_DEDUPE=false',
  cache: 'gateway WORKERS=1 + response cache',
  cacheLimited: 'gateway WORKERS=1 + response cache + rate limits',
  cacheRedis: 'gateway WORKERS=1 + response cache + rate limits, REDIS_URL',
  brotli: 'gateway WORKERS=1, UPSTREAM_DEDUPE=false, Accept-Encoding: br',
  gzip: 'gateway WORKERS=1, UPSTREAM_DEDUPE=false, Accept-Encoding: gzip',
  cors: 'gateway WORKERS=1, UPSTREAM_DEDUPE=false + CORS_ORIGINS',
  hardened: 'gateway WORKERS=1, UPSTREAM_DEDUPE=false + trusted documents + CORS_ORIGINS + rate limits',
  explain: 'gateway WORKERS=1, UPSTREAM_DEDUPE=false + EXPLAIN, x-gateway-explain: 1',
  contractOff: 'gateway WORKERS=1, UPSTREAM_DEDUPE=false, UPSTREAM_CONTRACT_SAMPLE=0',
  costBudget: 'gateway WORKERS=1, UPSTREAM_DEDUPE=false + RATE_LIMIT_COST_PER_MINUTE, x-gateway-cost: 1',
  contractAll: 'gateway WORKERS=1, UPSTREAM_DEDUPE=false, UPSTREAM_CONTRACT_SAMPLE=1',
} as const;

/** The least Node.js proxy (bench/least-proxy.ts): the floor under any gateway on this runtime. */
export const LEAST_PROXY = 'least Node.js proxy';

/** The contenders that answer from a response cache: their upstream calls say nothing of sharing. */
export const CACHED = new Set<string>([CONTENDER.cache, CONTENDER.cacheLimited, CONTENDER.cacheRedis]);

/** One contender on one configuration, its rounds merged. */
export type Measurement = {
  scenario: number;
  latencyMs: number;
  connections: number;
  contender: string;
  kind: 'direct' | 'gateway' | 'ceiling' | 'least proxy';
  rps: number;
  p50: number;
  p99: number;
  failures: number;
  /** bytes received per answered request: status line, headers and body as sent (compressed or not) */
  bytesPerAnswer?: number | undefined;
  /**
   * user + system CPU time of the contender's processes over the measured rounds, per answered request,
   * in ms (GraphQL contenders)
   */
  cpuMsPerRequest: number | undefined;
  /**
   * highest resident set size of any one of the contender's processes during its runs, in bytes (GraphQL contenders)
   */
  peakRss: number | undefined;
};

/** Upstream calls per request of one contender on one scenario, from the recording pass. */
export type CallCount = { scenario: number; contender: string; calls: number; maxConcurrent: number };

/** One client, one request at a time, 5 ms upstream. */
export type SingleClient = { scenario: number; contender: string; p50: number; p99: number; mean: number };

/** The steady-load run: resident set size of the gateway's processes together, one sample a second. */
export type SteadyRun = {
  contender: string;
  processes: number;
  seconds: number;
  requests: number;
  failures: number;
  samples: number[];
  peak: number;
};

/**
 * Starts of one gateway contender: time from spawn to the first answer, and the largest process's RSS
 * 2 s after it, per start.
 */
export type StartupRun = { contender: string; startsMs: number[]; idleRss: number[]; processes: number };

/** 50 connections asking the same pet at 20 ms upstream latency. */
export type SamePetRun = {
  contender: string;
  answered: number;
  upstreamCalls: number;
  failures: number;
  seconds: number;
};

/** The mixed workload (issue 23): 80% reads of 100 pets, 20% renames, at 5 ms upstream, with the upstream cache off and on. */
export type MixedRun = {
  contender: string;
  answered: number;
  upstreamCalls: number;
  failures: number;
  seconds: number;
};

/** The contract check measured from within (issue 22): the time its checks took over a run, and the gateway's CPU time. */
export type ContractCheckRun = { setting: string; scenario: number; requests: number; cpuMs: number; checkMs: number };

/** Live queries held open while nothing changes (issue 23): the gateway's CPU and memory, and the polls it sends. */
export type LiveAtRestRun = {
  liveQueries: number;
  seconds: number;
  cpuMs: number;
  rssBytes: number;
  upstreamCalls: number;
};

/** One process of a gateway's tree and its peak resident set size over its life (VmHWM). */
export type ProcessPeak = { role: 'primary' | 'worker'; bytes: number };

export type ResultsInput = {
  quick: boolean;
  date: string;
  cores: number;
  cpu: string;
  /** the runtime of the gateways and helper processes */
  node: string;
  /** the runtime of the bench's own process: the load generator and the in-process recording emulators */
  loadGenerator: string;
  /** the older line run beside it for the key rows, and the label of its contender */
  baseline?: { version: string; label: string; build?: { commit: string; label: string } };
  commit: string;
  /** how the gateway contenders were started (the `npm start` command) */
  startCommand: string;
  /** clock ticks per second of /proc CPU times */
  clockTicks: number;
  plan: {
    latencies: number[];
    connections: number[];
    seconds: number;
    rounds: number;
    warmupSeconds: number;
    singleSeconds: number;
    singleRounds: number;
    steadySeconds: number;
    starts: number;
    samePetSeconds: number;
  };
  startup: StartupRun[];
  calls: CallCount[];
  samePet: SamePetRun[];
  /** the mixed workload's runs (issue 23); empty when it was not run */
  mixed: MixedRun[];
  /** live queries at rest (issue 23): none, then some held open; empty when it was not run */
  liveAtRest: LiveAtRestRun[];
  /** the contract check's own time (issue 22); empty when it was not run */
  contractCheck: ContractCheckRun[];
  /**
   * the latency budget (bench/latency-budget.md): measured by hand with timing instrumentation that
   * is not shipped, so kept as written, with the run it came from, and shown as it is
   */
  budget?: string;
  /** faults under load; empty when it was not run */
  faults: FaultRun[];
  /** an MCP tool call against the same GraphQL request (issue 36); undefined when it was not run */
  mcpCost?: McpCost | undefined;
  measurements: Measurement[];
  singleClient: SingleClient[];
  steady: SteadyRun | undefined;
  /** each gateway's processes at the end of a phase, with their peak resident set size (VmHWM) */
  peakRss: { contender: string; latencyMs: number; processes: ProcessPeak[] }[];
  durationSeconds: number;
};

import { FAULT_DEADLINE_MS, type FaultRun } from './faults.js';
import { MCP_CONTENDERS, type McpCost } from './mcp.js';

const SCENARIO_NAMES: Record<number, string> = {
  1: '1 pet by id',
  2: '2 list by status',
  3: '3 fan-out 50 orders + pets',
  4: '4 _entities 100 reps / 50 ids',
  5: '5 large answer, 50 pets',
};
/** The calls a minimal client makes: the most the gateway may make. */
const DISTINCT_ENTITIES: Record<number, number> = { 3: 60, 4: 50 };

const MB = 2 ** 20;
const mb = (bytes: number) => (bytes / MB).toFixed(0);
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : '—');
const cpu = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? '' : value.toFixed(3));
const pct = (value: number) => `${(value * 100).toFixed(0)}%`;
const verdict = (met: boolean) => (met ? '**met**' : '**missed**');

/** The median (mean of the middle two for an even count). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Growth of the steady run: the median of its last sixth against that of its second sixth (the first is warm-up). */
export function steadyGrowth(run: SteadyRun): { early: number; late: number; growth: number } {
  const sixth = Math.max(1, Math.floor(run.samples.length / 6));
  const early = median(run.samples.slice(sixth, 2 * sixth));
  const late = median(run.samples.slice(-sixth));
  return { early, late, growth: late - early };
}

/** Allowed growth over the steady run before it counts as growing: GC noise on a heap of this size. */
const GROWTH_TOLERANCE = 8 * MB;

/** Issue 11's CPU budgets per request, at 0 ms upstream and 10 connections. */
const CPU_TARGETS: readonly { scenario: number; ms: number }[] = [
  { scenario: 1, ms: 0.25 },
  { scenario: 2, ms: 0.35 },
  { scenario: 3, ms: 4 },
];

type Find = (scenario: number, latencyMs: number, connections: number, contender: string) => Measurement | undefined;

/**
 * Issue 20: the CPU a compressed answer costs. Scenario 5 asked of three gateways alike but for the
 * Accept-Encoding the load generator sends (none, br, gzip); the difference in CPU per request is
 * compressing the answer (the lane writes it; RESPONSE_COMPRESSION_MIN_BYTES at its default).
 */
function renderCompression(input: ResultsInput, find: Find, push: (...lines: string[]) => number): void {
  const plain = find(5, 0, 10, CONTENDER.noDedupe);
  if (!plain) return;
  const rows = [plain, find(5, 0, 10, CONTENDER.brotli), find(5, 0, 10, CONTENDER.gzip)].filter(
    (m): m is Measurement => m !== undefined,
  );
  const added = (m: Measurement) =>
    m === plain || m.cpuMsPerRequest === undefined || plain.cpuMsPerRequest === undefined
      ? ''
      : `${m.cpuMsPerRequest >= plain.cpuMsPerRequest ? '+' : ''}${cpu(m.cpuMsPerRequest - plain.cpuMsPerRequest)}`;
  push(
    '## Compressed answers',
    '',
    `${SCENARIO_NAMES[5]} (\`petsByStatus\` of all three statuses, every field: 3 upstream calls, about 8.5 KB of JSON), 0 ms`,
    "upstream, 10 connections, one process, sharing of upstream calls off (so that no request rides on another's call and",
    "a slower contender's extra CPU cannot hide in the calls it saves). The three gateways are configured alike; only the",
    'Accept-Encoding the load generator sends differs. Bytes per answer are as received: status line, headers and body.',
    '',
    '| Contender | req/s | p50 ms | p99 ms | CPU ms/req | CPU added | Bytes per answer |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (m) =>
        `| ${m.contender} | ${m.rps.toFixed(0)} | ${ms(m.p50)} | ${ms(m.p99)} | ${cpu(m.cpuMsPerRequest)} | ${added(m)} | ${m.bytesPerAnswer === undefined ? '' : m.bytesPerAnswer.toFixed(0)} |`,
    ),
    '',
  );
  if (input.quick) push('A quick run: a single round of 1 s, so CPU figures are indicative only.', '');
}

/**
 * Issue 22: what the upstream contract check costs at its default sample and when it checks every
 * answer (against none), and what a request that asks to be explained costs (against the default).
 */
function renderUpstreamSafety(input: ResultsInput, find: Find, push: (...lines: string[]) => number): void {
  const rows: { label: string; scenario: number; contender: string; against: string }[] = [
    ...[1, 2, 3].map((scenario) => ({
      label: 'contract check at its default sample (UPSTREAM_CONTRACT_SAMPLE unset) against none',
      scenario,
      contender: CONTENDER.noDedupe,
      against: CONTENDER.contractOff,
    })),
    ...[1, 2].map((scenario) => ({
      label: 'contract check of every answer (UPSTREAM_CONTRACT_SAMPLE=1) against none',
      scenario,
      contender: CONTENDER.contractAll,
      against: CONTENDER.contractOff,
    })),
    ...[1, 2, 3].map((scenario) => ({
      label:
        "demand control charging the client's budget of upstream calls (RATE_LIMIT_COST_PER_MINUTE, never refusing) " +
        'and answering `x-gateway-cost: 1`, against the default, which only estimates',
      scenario,
      contender: CONTENDER.costBudget,
      against: CONTENDER.noDedupe,
    })),
    ...[1, 2, 3].map((scenario) => ({
      label: 'a request with `x-gateway-explain: 1` (EXPLAIN=true) against one without',
      scenario,
      contender: CONTENDER.explain,
      against: CONTENDER.noDedupe,
    })),
  ];
  const lines = rows.flatMap(({ label, scenario, contender, against }) => {
    const base = find(scenario, 0, 10, against);
    const m = find(scenario, 0, 10, contender);
    if (base?.cpuMsPerRequest === undefined || m?.cpuMsPerRequest === undefined) return [];
    const ratio = m.cpuMsPerRequest / base.cpuMsPerRequest;
    return [
      `| ${SCENARIO_NAMES[scenario]}: ${label} | ${cpu(m.cpuMsPerRequest)} vs ${cpu(base.cpuMsPerRequest)} ms | ${ratio.toFixed(3)}× |`,
    ];
  });
  const checks = input.contractCheck.map(
    (run) =>
      `| ${SCENARIO_NAMES[run.scenario]}: contract check, ${run.setting} | ${((run.checkMs * 1000) / Math.max(1, run.requests)).toFixed(2)} µs | ${(run.cpuMs / Math.max(1, run.requests)).toFixed(3)} ms | ${((100 * run.checkMs) / Math.max(0.001, run.cpuMs)).toFixed(2)}% |`,
  );
  if (lines.length === 0 && checks.length === 0) return;
  if (checks.length > 0)
    push(
      '## Contract check, measured from within',
      '',
      "The time the gateway's checks of sampled upstream answers took (`upstream_contract_check_seconds_total`) over a",
      `run of ${input.plan.samePetSeconds} s (one process, sharing off, 0 ms upstream, 10 connections), against its CPU time over the same run.`,
      'An answer that is not picked costs one random number besides, about 13 ns. Unlike the rows of the next section,',
      'which set two processes against each other, this measures the checks alone. The target is ≤ 3% at the default.',
      '',
      '| Run | Checks per request | CPU per request | Share of CPU |',
      '|---|---:|---:|---:|',
      ...checks,
      '',
    );
  if (lines.length === 0) return;
  push(
    '## Upstream safety costs',
    '',
    'CPU per request, one process, sharing of upstream calls off, 0 ms upstream, 10 connections. The contract check',
    "validates a sampled upstream answer against its operation's response schema; its target is ≤ 3% at the default",
    'sample. Explain adds `extensions.upstream` (every REST call of the request) to the answer.',
    '',
    '| Cost | CPU ms/req (with vs without) | Ratio |',
    '|---|---:|---:|',
    ...lines,
    '',
  );
  if (input.quick) push('A quick run: a single round of 1 s, so CPU figures are indicative only.', '');
}

/**
 * Issue 21: what a browser-facing, hardened deployment costs against the default one, and a
 * response-cache hit against an uncached request; CPU per request, 0 ms upstream, 10 connections.
 */
function renderHardened(input: ResultsInput, find: Find, push: (...lines: string[]) => number): void {
  const rows: { label: string; scenario: number; contender: string; budget: number }[] = [
    { label: 'CORS_ORIGINS set', scenario: 1, contender: CONTENDER.cors, budget: 1.25 },
    { label: 'CORS_ORIGINS set', scenario: 2, contender: CONTENDER.cors, budget: 1.25 },
    {
      label: 'TRUSTED_DOCUMENTS + CORS_ORIGINS + rate limits',
      scenario: 1,
      contender: CONTENDER.hardened,
      budget: 1.25,
    },
    {
      label: 'TRUSTED_DOCUMENTS + CORS_ORIGINS + rate limits',
      scenario: 2,
      contender: CONTENDER.hardened,
      budget: 1.25,
    },
    { label: 'a response-cache hit', scenario: 1, contender: CONTENDER.cache, budget: 0.6 },
  ];
  const lines = rows.flatMap(({ label, scenario, contender, budget }) => {
    const base = find(scenario, 0, 10, CONTENDER.noDedupe);
    const m = find(scenario, 0, 10, contender);
    if (base?.cpuMsPerRequest === undefined || m?.cpuMsPerRequest === undefined) return [];
    const ratio = m.cpuMsPerRequest / base.cpuMsPerRequest;
    return [
      `| ${SCENARIO_NAMES[scenario]}: ${label}, ≤ ${budget}× | ${cpu(m.cpuMsPerRequest)} vs ${cpu(base.cpuMsPerRequest)} ms | ${ratio.toFixed(2)}× | ${verdict(ratio <= budget)} |`,
    ];
  });
  if (lines.length === 0) return;
  push(
    '## Targets: CORS, hardened and cached requests',
    '',
    'CPU per request against the default gateway serving the same request, both in one process with sharing of',
    "upstream calls off (so that no request rides on another's call), 0 ms upstream, 10 connections. The CORS and",
    'hardened contenders send an `Origin` the gateway allows; the hardened one names its document by hash',
    "(`extensions.persistedQuery`) from a manifest of the scenarios' documents, with both rate limits set too high to",
    'refuse. The response-cache row compares answers served from the cache (scenario 1 asks one pet) with the uncached',
    'request.',
    '',
    '| Target | CPU ms/req (contender vs default) | Ratio | |',
    '|---|---:|---:|---|',
    ...lines,
    '',
  );
  if (input.quick) push('A quick run: a single round of 1 s, so CPU figures are indicative only.', '');
}

/**
 * The least Node.js proxy beside direct REST and the gateway, 10 connections: how much of the
 * gateway's distance from direct REST any proxy on this runtime and machine has.
 */
function renderLeastProxy(input: ResultsInput, find: Find, push: (...lines: string[]) => number): void {
  const lines: string[] = [];
  for (const latencyMs of [0, 5])
    for (const scenario of [1, 2]) {
      const direct = find(scenario, latencyMs, 10, 'direct');
      const proxy = find(scenario, latencyMs, 10, LEAST_PROXY);
      const gateway = find(scenario, latencyMs, 10, CONTENDER.noDedupe);
      if (!direct || !proxy || !gateway) continue;
      const cell = (m: Measurement) =>
        `${m.rps.toFixed(0)} req/s, ${pct(m.rps / direct.rps)}; p50 ${m.p50 >= direct.p50 ? '+' : ''}${ms(m.p50 - direct.p50)} ms` +
        (m.cpuMsPerRequest === undefined ? '' : `; CPU ${cpu(m.cpuMsPerRequest)} ms/req`);
      lines.push(
        `| ${SCENARIO_NAMES[scenario]}, ${latencyMs} ms | ${direct.rps.toFixed(0)} req/s, p50 ${ms(direct.p50)} ms | ${cell(proxy)} | ${cell(gateway)} |`,
      );
    }
  if (lines.length === 0) return;
  push(
    '## The least Node.js proxy',
    '',
    'What any proxy on this runtime and machine costs before a gateway does anything: `bench/least-proxy.ts` reads the',
    "POST and parses its JSON, makes the scenario's one REST call through an undici pool, wraps the parsed answer in",
    '`{ "data": … }` and writes it; no GraphQL, no plugins, no log. One process, 10 connections, in the same rounds as',
    "the others; the gateway is the one process with sharing off. Percentages are of direct REST's throughput, p50 as",
    "added to direct REST's.",
    '',
    `| Scenario, upstream | direct REST | ${LEAST_PROXY} | ${CONTENDER.noDedupe} |`,
    '|---|---|---|---|',
    ...lines,
    '',
  );
}

/**
 * The targets of the move to the shipped line: one process, sharing off, 10 connections; at 5 ms
 * upstream against direct REST, at 0 ms CPU per request against the older line (an earlier
 * build on it, when the run has one, else this build) in the same rounds; memory of one process.
 */
function renderRuntimeTargets(input: ResultsInput, find: Find, push: (...lines: string[]) => number): void {
  const main = CONTENDER.noDedupe;
  const majorOf = (version: string) => version.replace(/^v(\d+).*/, '$1');
  const others = [input.baseline?.label, input.baseline?.build?.label].filter(
    (label): label is string => label !== undefined,
  );
  // The CPU targets are set against the earlier build on the older line when there is one.
  const against = input.baseline?.build?.label ?? input.baseline?.label;
  const lines: string[] = [];
  const rest = (text: (label: string) => string) => others.map((label) => ` ${text(label)} |`).join('');
  for (const scenario of [1, 2]) {
    const direct = find(scenario, 5, 10, 'direct');
    const m = find(scenario, 5, 10, main);
    if (!m || !direct) continue;
    const share = (x: Measurement | undefined) =>
      x ? `${pct(x.rps / direct.rps)} (${x.rps.toFixed(0)} vs ${direct.rps.toFixed(0)} req/s)` : '—';
    const added = (x: Measurement | undefined) =>
      x ? `${x.p50 >= direct.p50 ? '+' : ''}${ms(x.p50 - direct.p50)} ms (${ms(x.p50)} vs ${ms(direct.p50)})` : '—';
    lines.push(
      `| ${SCENARIO_NAMES[scenario]}, 5 ms upstream: throughput ≥ 90% of direct REST | ${share(m)} ${verdict(m.rps / direct.rps >= 0.9)} |${rest((label) => share(find(scenario, 5, 10, label)))}`,
      `| ${SCENARIO_NAMES[scenario]}, 5 ms upstream: p50 added ≤ 1 ms | ${added(m)} ${verdict(m.p50 - direct.p50 <= 1)} |${rest((label) => added(find(scenario, 5, 10, label)))}`,
    );
  }
  for (const scenario of [1, 2]) {
    const m = find(scenario, 0, 10, main);
    if (m?.cpuMsPerRequest === undefined) continue;
    const base = against === undefined ? undefined : find(scenario, 0, 10, against)?.cpuMsPerRequest;
    const ratio = base === undefined ? undefined : m.cpuMsPerRequest / base;
    lines.push(
      `| ${SCENARIO_NAMES[scenario]}, 0 ms upstream: CPU per request ≤ 0.7× ${input.baseline?.build ? `the build of ${input.baseline.build.commit}` : 'this build'} on the older line | ${cpu(m.cpuMsPerRequest)} ms${ratio === undefined ? '' : `: ${ratio.toFixed(2)}× ${verdict(ratio <= 0.7)}`} |${rest(
        (label) => {
          const value = find(scenario, 0, 10, label)?.cpuMsPerRequest;
          return value === undefined ? '—' : `${cpu(value)} ms`;
        },
      )}`,
    );
  }
  const idleCell = (label: string) => {
    const run = input.startup.find((s) => s.contender === label);
    return run && run.idleRss.length > 0 ? `${run.idleRss.map(mb).join(', ')} MB` : '—';
  };
  const idle = input.startup.find((s) => s.contender === CONTENDER.workers1);
  if (idle && idle.idleRss.length > 0)
    lines.push(
      `| idle resident memory of one process (2 s after start and one request), each start: ≤ 110 MB | ${idleCell(CONTENDER.workers1)} ${verdict(Math.max(...idle.idleRss) <= 110 * MB)} |${rest(
        (label) =>
          label === input.baseline?.label && input.baseline
            ? idleCell(`${CONTENDER.workers1}, Node ${majorOf(input.baseline.version)}`)
            : '—',
      )}`,
    );
  const peakOf = (...labels: string[]) => {
    const values = input.peakRss
      .filter((p) => labels.includes(p.contender))
      .flatMap((p) => p.processes.map((each) => each.bytes));
    return values.length === 0 ? undefined : Math.max(...values);
  };
  const peak = peakOf(CONTENDER.workers1, main);
  if (peak !== undefined)
    lines.push(
      `| peak resident memory (VmHWM) of one process over every scenario (${CONTENDER.workers1}, and with sharing off): ≤ 160 MB | ${mb(peak)} MB ${verdict(peak <= 160 * MB)} |${rest(
        (label) => {
          const value = peakOf(label);
          return value === undefined ? '—' : `${mb(value)} MB (scenarios 1 and 2)`;
        },
      )}`,
    );
  if (lines.length === 0) return;
  push(
    `## Targets: Node.js ${majorOf(input.node)}, one process, sharing off`,
    '',
    `\`${main}\` (one upstream call per request), 10 connections, on Node ${input.node}.`,
    input.baseline
      ? `Beside it, in the same rounds: the same build on Node ${input.baseline.version}${input.baseline.build ? `, and the build of ${input.baseline.build.commit} (before the work on this line's targets) on Node ${input.baseline.version}, started as its own \`npm start\` started it, which the CPU targets are set against` : ', which the CPU targets are set against'}.`
      : 'No older line ran beside it in this run (`--baseline-node=<path>`).',
    '',
    `| Target | Node ${input.node} |${others.map((label) => ` ${label.replace(`${main}, `, '')} |`).join('')}`,
    `|---|---|${others.map(() => '---|').join('')}`,
    ...lines,
    '',
  );
}

/** The mixed workload's table: answers per second and upstream calls, the upstream cache off and on. */
function renderMixed(input: ResultsInput, push: (...lines: string[]) => number): void {
  if (input.mixed.length === 0) return;
  push(
    '## Mixed workload: 80% reads of 100 pets, 20% updates, 5 ms upstream',
    '',
    `Each of 10 connections sends the same cycle of 125 operations (100 \`pet(id)\` reads, one of each pet 1–100, and 25 \`updatePetWithForm\` renames of pets just read) for ${input.plan.samePetSeconds} s, after a ${input.plan.warmupSeconds} s warm-up, to a gateway with WORKERS=1 in front of an emulator with 5 ms latency that records its requests. With the upstream cache on (\`UPSTREAM_CACHE=getPetById:30s\`), a rename drops the renamed pet's kept answer before it is answered.`,
    '',
    '| Contender | Answered | req/s | Upstream calls | Calls per answer | Failed |',
    '|---|---:|---:|---:|---:|---:|',
    ...input.mixed.map(
      (run) =>
        `| ${run.contender} | ${run.answered} | ${(run.answered / Math.max(0.001, run.seconds)).toFixed(0)} | ${run.upstreamCalls} | ${(run.upstreamCalls / Math.max(1, run.answered)).toFixed(3)} | ${run.failures} |`,
    ),
    '',
  );
}

/** Live queries at rest: CPU per second, memory and upstream polls with none and with some held open. */
function renderLiveAtRest(input: ResultsInput, push: (...lines: string[]) => number): void {
  const [idle, held] = input.liveAtRest;
  if (idle === undefined || held === undefined) return;
  const perQuery = (more: number) => (more / Math.max(1, held.liveQueries)).toFixed(3);
  push(
    '## Live queries at rest',
    '',
    `One gateway (WORKERS=1, \`LIVE_QUERIES=true\`, \`LIVE_POLL_INTERVAL_MS\` at its default, 5000) in front of a recording emulator, ${held.seconds} s of rest with no live query, then ${held.seconds} s with ${held.liveQueries} open over server-sent events, one per pet 1–${held.liveQueries}, all with the same credential. Nothing changes: what is left is the polling of what they read (one \`GET /pet/{id}\` per pet and interval, with the caller's credential) and the connections held.`,
    '',
    '| Live queries | CPU ms per second | RSS MB | Upstream calls | Upstream calls per second |',
    '|---:|---:|---:|---:|---:|',
    ...[idle, held].map(
      (run) =>
        `| ${run.liveQueries} | ${(run.cpuMs / run.seconds).toFixed(2)} | ${(run.rssBytes / 2 ** 20).toFixed(1)} | ${run.upstreamCalls} | ${(run.upstreamCalls / run.seconds).toFixed(1)} |`,
    ),
    '',
    `Per live query at rest: ${perQuery((held.cpuMs - idle.cpuMs) / held.seconds)} ms of CPU per second, ${perQuery((held.rssBytes - idle.rssBytes) / 1024)} KB of memory.`,
    '',
  );
}

/** The section of faults under load: each load's answers, what must hold of them, latency and memory. */
export function renderFaults(runs: readonly FaultRun[]): string[] {
  if (runs.length === 0) return [];
  const share = (part: number, whole: number) => `${((part / whole) * 100).toFixed(1)}%`;
  return [
    '## Faults under load',
    '',
    `The compiled gateway (WORKERS=1, production settings, UPSTREAM_TIMEOUT_MS=${FAULT_DEADLINE_MS}) in front of a pet store failing a seeded random share of its calls; ${runs[0]?.clients ?? 0} callers (one in the last load), each with its own credential, asking for pets 1–97 in turn, one query after another, after a 1 s warm-up. "Clean": the pet and no error. Every kind of fault: a 500 and a 503 telling of the upstream's files, an HTML 502, a stall past the deadline, a reset, a cut body, a body that is not JSON, a body of the wrong shape. "Leaked": answers holding the upstream's words. "Calls per answer": upstream calls over answers, retries included (the retry budget, UPSTREAM_RETRY_BUDGET_PERCENT=20, bounds it).`,
    '',
    '| Load | Seconds | Answers | Clean | 5xx | Dropped | Uncoded | Leaked | p50 (ms) | p99 (ms) | Upstream calls | Calls per answer | Faults given | RSS first → max → last (MB) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
    ...runs.map(
      (run) =>
        `| ${run.label} | ${run.seconds} | ${run.answers} | ${share(run.clean, run.answers)} | ${run.serverErrors} | ${run.dropped} | ${run.uncoded} | ${run.leaked} | ${ms(run.p50)} | ${ms(run.p99)} | ${run.upstreamCalls} | ${(run.upstreamCalls / Math.max(1, run.answers)).toFixed(2)} | ${Object.entries(
          run.faults,
        )
          .map(([fault, count]) => `${fault} ${count}`)
          .join(', ')} | ${mb(run.rss[0] ?? 0)} → ${mb(Math.max(0, ...run.rss))} → ${mb(run.rss.at(-1) ?? 0)} |`,
    ),
    '',
    `Error codes given: ${runs
      .map(
        (run) =>
          `${run.label}: ${
            Object.entries(run.codes)
              .map(([code, count]) => `${code} ${count}`)
              .join(', ') || 'none'
          }`,
      )
      .join('; ')}.`,
    '',
  ];
}

/** The section of an MCP tool call's cost against the same GraphQL request: each way's figures and their ratio. */
export function renderMcpCost(cost: McpCost | undefined): string[] {
  if (cost === undefined) return [];
  const perCall = (run: McpCost['runs'][number]) => run.cpuMs / Math.max(1, run.requests);
  const rps = (run: McpCost['runs'][number]) => run.requests / Math.max(0.001, run.seconds);
  const graphql = cost.runs.find((run) => run.contender === MCP_CONTENDERS.graphql);
  const tool = cost.runs.find((run) => run.contender === MCP_CONTENDERS.tool);
  const { plan } = cost;
  return [
    '## An MCP tool call against the same GraphQL request',
    '',
    `The compiled gateway (WORKERS=1, \`MCP=true\`, UPSTREAM_DEDUPE=false) in front of the 0 ms emulator, on ${cost.connections} connections: the shipped \`GetPet\` operation for pets 1–50 in turn (each connection walks the ids), sent as a GraphQL POST to \`/graphql\` and as a \`tools/call\` of the \`GetPet\` tool to \`/mcp\` (stateless, JSON answer): the same document, variables and upstream call. The two alternate on the one gateway, ${plan.rounds} round(s) of ${plan.seconds} s each after a ${plan.warmupSeconds} s warm-up each; CPU is the gateway process's user + system time over the rounds, per answered call.`,
    '',
    '| Request | Calls | req/s | p50 ms | p99 ms | CPU ms per call | Failed |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...cost.runs.map(
      (run) =>
        `| ${run.contender} | ${run.requests} | ${rps(run).toFixed(0)} | ${ms(run.p50)} | ${ms(run.p99)} | ${cpu(perCall(run))} | ${run.failures} |`,
    ),
    '',
    ...(graphql && tool && graphql.requests > 0 && tool.requests > 0
      ? [
          `A tool call costs **${(perCall(tool) / perCall(graphql)).toFixed(2)}×** the CPU of the GraphQL request (${cpu(perCall(tool))} against ${cpu(perCall(graphql))} ms), and one process answers ${pct(rps(tool) / rps(graphql))} as many of them per second.`,
          '',
        ]
      : []),
  ];
}

export function renderResults(input: ResultsInput): string {
  const find = (scenario: number, latencyMs: number, connections: number, contender: string) =>
    input.measurements.find(
      (m) =>
        m.scenario === scenario &&
        m.latencyMs === latencyMs &&
        m.connections === connections &&
        m.contender === contender,
    );
  const lines: string[] = [];
  const push = (...more: string[]) => lines.push(...more);
  const autoProcesses = Math.max(
    0,
    ...input.peakRss.filter((p) => p.contender === CONTENDER.auto).map((p) => p.processes.length),
    ...input.startup.filter((s) => s.contender === CONTENDER.auto).map((s) => s.processes),
  );

  push(
    `# Benchmark results${input.quick ? ' (quick run: indicative only)' : ''}`,
    '',
    `Written by \`npm run bench${input.quick ? ' -- --quick' : ''}\` on ${input.date.slice(0, 10)} (${input.date}).`,
    `Machine: **${input.cores} cores** (${input.cpu}). Code: ${input.commit}. The run took ${Math.round(input.durationSeconds / 60)} min.`,
    `Runtime: every gateway and helper process (emulator, ceiling, direct client) on **Node ${input.node}**${input.baseline ? `, except the rows labelled \`Node ${input.baseline.version.replace(/^v(\d+).*/, '$1')}\`, which run the same build on **Node ${input.baseline.version}** in the same rounds` : ''}; the load generator (autocannon) and the recording emulators of the side measures in the bench's own process, on Node ${input.loadGenerator}.`,
    `Each configuration: a ${input.plan.warmupSeconds} s warm-up per contender, then ${input.plan.rounds} round(s) of ${input.plan.seconds} s per contender, contenders alternating run by run (each round starts with the next one); figures merge the rounds.`,
    '',
    'Contenders, each its own process (or tree of processes): **direct** is autocannon calling the emulator itself (scenarios 1, 2)',
    'or the minimal REST client `bench/direct-client.ts` (scenarios 3, 4: a plain node:http server making the fewest REST calls,',
    "concurrently, over an undici pool of the gateway's size). **gateway** is the compiled gateway, built once by `npm run build`",
    `at the start of the run and started as \`npm start\` starts it (\`${input.startCommand}\`), with \`NODE_ENV=production\`,`,
    '`PETSTORE_URL`/`PLANTS_URL` set to the bench emulator and every other setting at its default (rate limits off, shared',
    `in-flight upstream GETs on), with **WORKERS=1** (one process) and **WORKERS=auto** (the production default: a cluster primary`,
    `and one worker per usable core; ${autoProcesses} process(es) in this run${autoProcesses <= 1 ? ', so no workers: WORKERS was not in effect in this build' : ''}). Beside them: the same with`,
    '**UPSTREAM_DEDUPE=false** (one upstream call per request even when requests ask the same thing; 10 connections,',
    'scenarios 1–3 and 5 at 0 ms, 1 and 2 at 5 ms), and with the response cache (`RESPONSE_CACHE_TTL_MS=60000`; scenario 1, 10 connections, full run only).',
    '**ceiling** is the same gateway code, from source under tsx, in one process with the same settings, its upstream answers',
    "served from memory after the first call (`bench/ceiling.ts`): GraphQL and the gateway's own code with no upstream path.",
    'The upstream is the emulator with a fixed added latency per request.',
    '',
    `**CPU per request**: the user + system CPU time of every process of the contender's tree (primary and workers, found`,
    `through \`/proc/<pid>/task/*/children\`), read from \`/proc/<pid>/stat\` (utime + stime, ${input.clockTicks} ticks a second) before and after`,
    'each measured round, summed over the rounds and divided by the requests answered (2xx) in them. Warm-ups are not counted.',
    'The upstream emulator and the load generator are other processes and are not counted.',
    '',
  );

  // Targets.
  const columns = [CONTENDER.workers1, CONTENDER.auto, CONTENDER.noDedupe];
  push(
    '## Targets: CPU, latency, memory and sharing',
    '',
    `| Target | ${columns.join(' | ')} |`,
    `|---|${columns.map(() => '---').join('|')}|`,
  );
  const row = (target: string, cell: (contender: string) => string | undefined) =>
    push(`| ${target} | ${columns.map((label) => cell(label) ?? '—').join(' | ')} |`);
  for (const { scenario, ms: budget } of CPU_TARGETS) {
    row(`CPU per request, ${SCENARIO_NAMES[scenario]}, 0 ms upstream, 10 connections: ≤ ${budget} ms`, (label) => {
      const m = find(scenario, 0, 10, label);
      return m?.cpuMsPerRequest === undefined
        ? undefined
        : `${cpu(m.cpuMsPerRequest)} ms ${verdict(m.cpuMsPerRequest <= budget)}`;
    });
  }
  for (const scenario of [1, 2]) {
    const direct = find(scenario, 5, 10, 'direct');
    row(`${SCENARIO_NAMES[scenario]}, 5 ms upstream, 10 connections: throughput ≥ 90% of direct REST`, (label) => {
      const m = find(scenario, 5, 10, label);
      if (!m || !direct) return undefined;
      const ratio = m.rps / direct.rps;
      return `${pct(ratio)} (${m.rps.toFixed(0)} vs ${direct.rps.toFixed(0)} req/s) ${verdict(ratio >= 0.9)}`;
    });
    row(`${SCENARIO_NAMES[scenario]}, 5 ms upstream, 10 connections: p50 added ≤ 1 ms`, (label) => {
      const m = find(scenario, 5, 10, label);
      if (!m || !direct) return undefined;
      const added = m.p50 - direct.p50;
      return `${added >= 0 ? '+' : ''}${ms(added)} ms (${ms(m.p50)} vs ${ms(direct.p50)}) ${verdict(added <= 1)}`;
    });
  }
  {
    const direct = find(1, 0, 10, 'direct');
    row(`${SCENARIO_NAMES[1]}, 0 ms upstream, 10 connections: throughput ≥ 15% of direct REST`, (label) => {
      const m = find(1, 0, 10, label);
      if (!m || !direct) return undefined;
      const ratio = m.rps / direct.rps;
      return `${pct(ratio)} (${m.rps.toFixed(0)} vs ${direct.rps.toFixed(0)} req/s) ${verdict(ratio >= 0.15)}`;
    });
  }
  row(
    `start to first answer (spawn of \`node … dist/main.js\` to the first answer to scenario 1), median of ${input.plan.starts} starts: ≤ 1.5 s`,
    (label) => {
      const run = input.startup.find((s) => s.contender === label);
      if (!run || run.startsMs.length === 0) return undefined;
      const value = median(run.startsMs);
      return `${(value / 1000).toFixed(2)} s ${verdict(value <= 1500)}`;
    },
  );
  row('resident memory of each gateway process, idle (2 s after start and one request): ≤ 100 MB', (label) => {
    const run = input.startup.find((s) => s.contender === label);
    if (!run || run.idleRss.length === 0) return undefined;
    const value = Math.max(...run.idleRss);
    return `${mb(value)} MB (largest of ${run.processes} process(es), highest of ${run.idleRss.length} starts) ${verdict(value <= 100 * MB)}`;
  });
  row('resident memory of each gateway process, peak under every scenario (VmHWM): ≤ 160 MB', (label) => {
    const entries = input.peakRss.filter((p) => p.contender === label && p.processes.length > 0);
    if (entries.length === 0) return undefined;
    const highest = Math.max(...entries.flatMap((p) => p.processes.map((each) => each.bytes)));
    return `${mb(highest)} MB (highest of ${Math.max(...entries.map((p) => p.processes.length))} process(es)) ${verdict(highest <= 160 * MB)}`;
  });
  row('50 connections asking the same pet, 20 ms upstream: upstream calls ≤ half the answered queries', (label) => {
    const run = input.samePet.find((s) => s.contender === label);
    if (!run || run.answered === 0) return undefined;
    const ratio = run.upstreamCalls / run.answered;
    // With sharing off every query makes its own call: the column shows what sharing saves, not a target.
    return `${pct(ratio)} (${run.upstreamCalls} calls for ${run.answered} answers) ${label === CONTENDER.noDedupe ? '(sharing off)' : verdict(ratio <= 0.5)}`;
  });
  push(
    '',
    `The ${CONTENDER.noDedupe} column is for reference: the cost of a request that shares no upstream call (at 0 ms and 10`,
    "connections, scenario 1 asks the same pet on every connection, so with sharing on some requests wait on another's call).",
    '',
  );

  renderRuntimeTargets(input, find, push);
  renderLeastProxy(input, find, push);
  if (input.budget !== undefined) push(input.budget.trim(), '');

  // Redis (issue 13): the cache shared through Redis against the uncached gateway and the in-process cache.
  {
    const uncached = find(1, 5, 10, CONTENDER.workers1);
    const local = find(1, 5, 10, CONTENDER.cacheLimited);
    const redis = find(1, 5, 10, CONTENDER.cacheRedis);
    if (uncached && redis) {
      const ratio = redis.rps / uncached.rps;
      push(
        '## Targets: the response cache through Redis',
        '',
        `${SCENARIO_NAMES[1]}, 5 ms upstream, 10 connections, response cache (\`RESPONSE_CACHE_TTL_MS=60000\`) and rate limits`,
        '(`RATE_LIMIT_PER_MINUTE` and `RATE_LIMIT_ADDRESS_PER_MINUTE` set high enough never to refuse) on, in one process;',
        'with `REDIS_URL` the cache and the counters are in a local `redis-server` (started by the bench, persistence off).',
        '',
        '| Contender | req/s | p50 ms | p99 ms | CPU ms/req | vs uncached |',
        '|---|---:|---:|---:|---:|---:|',
        ...[uncached, local, redis].flatMap((m) =>
          m
            ? [
                `| ${m.contender} | ${m.rps.toFixed(0)} | ${ms(m.p50)} | ${ms(m.p99)} | ${m.cpuMsPerRequest === undefined ? '' : cpu(m.cpuMsPerRequest)} | ${(m.rps / uncached.rps).toFixed(2)}× |`,
              ]
            : [],
        ),
        '',
        `Target: the Redis-backed answer at least 2× the throughput of the uncached gateway: ${ratio.toFixed(2)}× ${verdict(ratio >= 2)}.`,
        '',
      );
    }
  }

  renderCompression(input, find, push);
  renderHardened(input, find, push);
  renderUpstreamSafety(input, find, push);

  // Targets kept from the previous benchmark.
  push('## Earlier targets (kept)', '', '| Target | Measured | |', '|---|---|---|');
  for (const scenario of [3, 4]) {
    const count = input.calls.find((c) => c.scenario === scenario && c.contender === CONTENDER.workers1);
    const distinct = DISTINCT_ENTITIES[scenario] ?? 0;
    if (count) {
      push(
        `| S${scenario}: upstream calls per request = distinct entities (${distinct}), fetched concurrently (${CONTENDER.workers1}) | ${count.calls} calls, up to ${count.maxConcurrent} at once | ${verdict(count.calls <= distinct)} |`,
      );
    }
  }
  for (const [scenario, limit] of [
    [3, 25],
    [4, 15],
  ] as const) {
    const direct = input.singleClient.find((s) => s.scenario === scenario && s.contender === 'direct');
    for (const label of [CONTENDER.workers1, CONTENDER.auto]) {
      const single = input.singleClient.find((s) => s.scenario === scenario && s.contender === label);
      if (single) {
        push(
          `| S${scenario}, 5 ms upstream, one client: answers in under ${limit} ms (${label}) | p50 ${ms(single.p50)} ms, p99 ${ms(single.p99)} ms (direct client p50 ${direct ? ms(direct.p50) : '—'} ms) | ${verdict(single.p50 < limit)} |`,
        );
      }
    }
  }
  if (input.steady) {
    const { early, late, growth } = steadyGrowth(input.steady);
    push(
      `| no RSS growth over a ${input.steady.seconds} s run at steady load (${input.steady.contender}, its processes together) | ${mb(early)} MB → ${mb(late)} MB (${growth >= 0 ? '+' : ''}${(growth / MB).toFixed(1)} MB; tolerance ${mb(GROWTH_TOLERANCE)} MB) | ${verdict(growth <= GROWTH_TOLERANCE)} |`,
    );
  }
  push('');

  // Every run.
  push(
    '## Throughput and latency',
    '',
    "`gateway/direct` is the contender's throughput over direct REST's on the same configuration; `of ceiling` its throughput over the",
    "framework ceiling's (0 ms only: the ceiling makes no upstream call, so latency does not change it). CPU ms/req as described",
    'above. Upstream calls per request come from a separate pass against a recording emulator, one request at a time (under load,',
    "shared in-flight calls make fewer). Peak RSS is the highest resident set size of any one of the contender's processes, sampled",
    'every 100 ms during its runs on that line.',
    '',
    '| Scenario | Upstream latency | Connections | Contender | req/s | p50 ms | p99 ms | CPU ms/req | Upstream calls/req | Peak RSS MB | gateway/direct | of ceiling |',
    '|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const m of input.measurements) {
    const direct = find(m.scenario, m.latencyMs, m.connections, 'direct');
    const ceiling = find(m.scenario, m.latencyMs, m.connections, 'ceiling');
    const calls = input.calls.find((c) => c.scenario === m.scenario && c.contender === m.contender);
    const ratio = m.kind !== 'direct' && direct ? pct(m.rps / direct.rps) : '';
    const ofCeiling = m.kind === 'gateway' && ceiling ? pct(m.rps / ceiling.rps) : '';
    push(
      `| ${SCENARIO_NAMES[m.scenario] ?? m.scenario} | ${m.latencyMs} ms | ${m.connections} | ${m.contender} | ${m.rps.toFixed(0)} | ${ms(m.p50)} | ${ms(m.p99)} | ${cpu(m.cpuMsPerRequest)} | ${calls ? calls.calls : ''} | ${m.peakRss === undefined ? '' : mb(m.peakRss)} | ${ratio} | ${ofCeiling} |${m.failures > 0 ? ` ${m.failures} failed` : ''}`,
    );
  }
  push('');

  if (input.startup.length > 0) {
    push(
      '## Start to first answer and idle memory',
      '',
      `Each contender started ${input.plan.starts} times (alternating with the other), against a 0 ms emulator: the time from the spawn of`,
      `\`${input.startCommand}\` until the first answer (with data, no errors) to scenario 1, polled every 10 ms; then, 2 s later, the`,
      'resident set size of each of its processes (the largest is shown).',
      '',
      '| Contender | Processes | Start to first answer, each start (ms) | Median | Idle RSS of the largest process, each start (MB) |',
      '|---|---:|---|---:|---|',
      ...input.startup.map(
        (s) =>
          `| ${s.contender} | ${s.processes} | ${s.startsMs.map((value) => value.toFixed(0)).join(', ')} | ${median(s.startsMs).toFixed(0)} ms | ${s.idleRss.map((bytes) => mb(bytes)).join(', ')} |`,
      ),
      '',
    );
  }

  if (input.samePet.length > 0) {
    push(
      '## The same pet on 50 connections, 20 ms upstream',
      '',
      `Scenario 1 on 50 connections for ${input.plan.samePetSeconds} s (after a ${input.plan.warmupSeconds} s warm-up), the upstream an emulator with 20 ms latency that records its requests.`,
      'With WORKERS=auto each worker shares its own in-flight calls.',
      '',
      '| Contender | Answered | Upstream calls | Calls per answer | Failed |',
      '|---|---:|---:|---:|---:|',
      ...input.samePet.map(
        (s) =>
          `| ${s.contender} | ${s.answered} | ${s.upstreamCalls} | ${(s.upstreamCalls / Math.max(1, s.answered)).toFixed(3)} | ${s.failures} |`,
      ),
      '',
    );
  }

  renderMixed(input, push);
  renderLiveAtRest(input, push);
  push(...renderMcpCost(input.mcpCost));

  if (input.singleClient.length > 0) {
    push(
      '## One client at a time, 5 ms upstream',
      '',
      '| Scenario | Contender | p50 ms | p99 ms | mean ms |',
      '|---|---|---:|---:|---:|',
    );
    for (const s of input.singleClient)
      push(
        `| ${SCENARIO_NAMES[s.scenario] ?? s.scenario} | ${s.contender} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.mean)} |`,
      );
    push('');
  }

  if (input.calls.length > 0) {
    push(
      '## Upstream calls per request',
      '',
      'Each contender in front of an emulator that records its requests (5 ms latency, so that concurrent calls overlap), one request',
      'at a time; "at once" is the most requests the emulator was handling at the same time. The gateway\'s pool allows 32 connections.',
      '',
      '| Scenario | Contender | Calls per request | At once |',
      '|---|---|---:|---:|',
    );
    for (const c of input.calls)
      push(`| ${SCENARIO_NAMES[c.scenario] ?? c.scenario} | ${c.contender} | ${c.calls} | ${c.maxConcurrent} |`);
    push('');
  }

  if (input.steady) {
    const { samples } = input.steady;
    push(
      '## Steady load',
      '',
      `${input.steady.contender} (${input.steady.processes} process(es)) under the four scenarios in turn on 10 connections, 0 ms upstream, for ${input.steady.seconds} s (${input.steady.requests} requests, ${input.steady.failures} failed).`,
      `Resident set size of its processes together, one sample a second (MB): ${samples.map((bytes) => mb(bytes)).join(' ')}.`,
      `Largest single process at any sample: ${mb(input.steady.peak)} MB.`,
      '',
    );
  }
  push(...renderFaults(input.faults));
  push(
    '## Peak RSS per gateway process',
    '',
    "VmHWM of each process of the gateway's tree at the end of the phase: its peak over its life, which covers every scenario of the phase.",
    '',
    '| Gateway | Upstream latency | Processes | Primary (MB) | Workers (MB) |',
    '|---|---|---:|---:|---|',
    ...input.peakRss.map(
      (p) =>
        `| ${p.contender} | ${p.latencyMs} ms | ${p.processes.length} | ${p.processes
          .filter((each) => each.role === 'primary')
          .map((each) => mb(each.bytes))
          .join(', ')} | ${
          p.processes
            .filter((each) => each.role === 'worker')
            .map((each) => mb(each.bytes))
            .join(', ') || '—'
        } |`,
    ),
    '',
  );
  return lines.join('\n');
}
