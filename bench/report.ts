/**
 * `bench/RESULTS.md`: the targets of the issue with what was measured, then every run.
 */

/** One contender on one configuration, its rounds merged. */
export type Measurement = {
  scenario: number;
  latencyMs: number;
  connections: number;
  contender: string;
  kind: 'direct' | 'gateway' | 'ceiling';
  rps: number;
  p50: number;
  p99: number;
  failures: number;
  /** highest resident set size of the contender's process during its runs, in bytes (GraphQL contenders) */
  peakRss: number | undefined;
};

/** Upstream calls per request of one contender on one scenario, from the recording pass. */
export type CallCount = { scenario: number; contender: string; calls: number; maxConcurrent: number };

/** One client, one request at a time, 5 ms upstream. */
export type SingleClient = { scenario: number; contender: string; p50: number; p99: number; mean: number };

/** The steady-load run: resident set size of the gateway, one sample a second. */
export type SteadyRun = { seconds: number; requests: number; failures: number; samples: number[]; peak: number };

export type ResultsInput = {
  quick: boolean;
  date: string;
  cores: number;
  cpu: string;
  node: string;
  commit: string;
  plan: { latencies: number[]; connections: number[]; seconds: number; rounds: number; warmupSeconds: number; singleSeconds: number; singleRounds: number; steadySeconds: number };
  calls: CallCount[];
  measurements: Measurement[];
  singleClient: SingleClient[];
  steady: SteadyRun | undefined;
  /** the gateway processes' peak resident set size over their whole life (VmHWM) */
  peakRss: { contender: string; latencyMs: number; bytes: number }[];
  durationSeconds: number;
};

const SCENARIO_NAMES: Record<number, string> = {
  1: '1 pet by id',
  2: '2 list by status',
  3: '3 fan-out 50 orders + pets',
  4: '4 _entities 100 reps / 50 ids',
};
/** The calls a minimal client makes: the most the gateway may make. */
const DISTINCT_ENTITIES: Record<number, number> = { 3: 60, 4: 50 };

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : '—');
const pct = (value: number) => `${(value * 100).toFixed(0)}%`;
const verdict = (met: boolean) => (met ? '**met**' : '**missed**');

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN);
}

/** Growth of the steady run: the median of its last sixth against that of its second sixth (the first is warm-up). */
export function steadyGrowth(run: SteadyRun): { early: number; late: number; growth: number } {
  const sixth = Math.max(1, Math.floor(run.samples.length / 6));
  const early = median(run.samples.slice(sixth, 2 * sixth));
  const late = median(run.samples.slice(-sixth));
  return { early, late, growth: late - early };
}

/** Allowed growth over the steady run before it counts as growing: GC noise on a heap of this size. */
const GROWTH_TOLERANCE = 8 * 2 ** 20;

export function renderResults(input: ResultsInput): string {
  const find = (scenario: number, latencyMs: number, connections: number, contender: string) =>
    input.measurements.find((m) => m.scenario === scenario && m.latencyMs === latencyMs && m.connections === connections && m.contender === contender);
  const lines: string[] = [];
  const push = (...more: string[]) => lines.push(...more);

  push(
    `# Benchmark results${input.quick ? ' (quick run: indicative only)' : ''}`,
    '',
    `Written by \`npm run bench${input.quick ? ' -- --quick' : ''}\` on ${input.date.slice(0, 10)} (${input.date}).`,
    `Machine: **${input.cores} cores** (${input.cpu}), Node ${input.node}. Code: ${input.commit}. The run took ${Math.round(input.durationSeconds / 60)} min.`,
    `Each configuration: a ${input.plan.warmupSeconds} s warm-up per contender, then ${input.plan.rounds} round(s) of ${input.plan.seconds} s per contender, contenders alternating run by run (each round starts with the next one); figures merge the rounds.`,
    '',
    'Contenders, each its own process: **direct** is autocannon calling the emulator itself (scenarios 1, 2) or the minimal',
    'REST client `bench/direct-client.ts` (scenarios 3, 4: a plain node:http server making the fewest REST calls, concurrently, over',
    'an undici pool of the gateway\'s size); **gateway** is `node --import tsx src/main.ts` with default settings; **ceiling**',
    'is the same gateway with upstream answers served from memory after the first call (`bench/ceiling.ts`): GraphQL and the',
    'gateway\'s own code with no upstream path. The upstream is the emulator with a fixed added latency per request.',
    '',
  );

  // Targets.
  push('## Targets', '', '| Target | Measured | |', '|---|---|---|');
  for (const scenario of [1, 2]) {
    const direct = find(scenario, 5, 10, 'direct');
    const gateway = find(scenario, 5, 10, 'gateway');
    if (direct && gateway) {
      const ratio = gateway.rps / direct.rps;
      const added = gateway.p50 - direct.p50;
      push(`| S${scenario}, 5 ms upstream, 10 connections: gateway throughput ≥ 90% of direct | ${pct(ratio)} (${gateway.rps.toFixed(0)} vs ${direct.rps.toFixed(0)} req/s) | ${verdict(ratio >= 0.9)} |`);
      push(`| S${scenario}, 5 ms upstream, 10 connections: p50 added latency ≤ 1 ms | ${added >= 0 ? '+' : ''}${ms(added)} ms (${ms(gateway.p50)} vs ${ms(direct.p50)}) | ${verdict(added <= 1)} |`);
    }
  }
  for (const scenario of [1, 2]) {
    for (const connections of input.plan.connections) {
      const ceiling = find(scenario, 0, connections, 'ceiling');
      const gateway = find(scenario, 0, connections, 'gateway');
      if (ceiling && gateway) {
        const ratio = gateway.rps / ceiling.rps;
        push(`| S${scenario}, 0 ms upstream, ${connections} connections: gateway ≥ 60% of the framework ceiling | ${pct(ratio)} (${gateway.rps.toFixed(0)} vs ${ceiling.rps.toFixed(0)} req/s) | ${verdict(ratio >= 0.6)} |`);
      }
    }
  }
  for (const scenario of [3, 4]) {
    const count = input.calls.find((c) => c.scenario === scenario && c.contender === 'gateway');
    const distinct = DISTINCT_ENTITIES[scenario] ?? 0;
    if (count) {
      push(`| S${scenario}: upstream calls per request = distinct entities (${distinct}), fetched concurrently | ${count.calls} calls, up to ${count.maxConcurrent} at once | ${verdict(count.calls <= distinct)} |`);
    }
  }
  for (const [scenario, limit] of [
    [3, 25],
    [4, 15],
  ] as const) {
    const single = input.singleClient.find((s) => s.scenario === scenario && s.contender === 'gateway');
    const direct = input.singleClient.find((s) => s.scenario === scenario && s.contender === 'direct');
    if (single) {
      push(`| S${scenario}, 5 ms upstream, one client: answers in under ${limit} ms | p50 ${ms(single.p50)} ms, p99 ${ms(single.p99)} ms (direct client p50 ${direct ? ms(direct.p50) : '—'} ms) | ${verdict(single.p50 < limit)} |`);
    }
  }
  const peak = Math.max(0, ...input.peakRss.filter((p) => p.contender === 'gateway').map((p) => p.bytes));
  push(`| peak RSS of the gateway under load ≤ 150 MB | ${mb(peak)} MB (highest VmHWM of the gateway processes) | ${verdict(peak <= 150 * 2 ** 20)} |`);
  if (input.steady) {
    const { early, late, growth } = steadyGrowth(input.steady);
    push(
      `| no RSS growth over a ${input.steady.seconds} s run at steady load | ${mb(early)} MB → ${mb(late)} MB (${growth >= 0 ? '+' : ''}${(growth / 2 ** 20).toFixed(1)} MB; tolerance ${mb(GROWTH_TOLERANCE)} MB) | ${verdict(growth <= GROWTH_TOLERANCE)} |`,
    );
  }
  push('');

  // Every run.
  push(
    '## Throughput and latency',
    '',
    '`gateway/direct` is the contender\'s throughput over direct REST\'s on the same configuration; `of ceiling` its throughput over the',
    'framework ceiling\'s (0 ms only: the ceiling makes no upstream call, so latency does not change it). Upstream calls per',
    'request come from a separate pass against a recording emulator. Peak RSS is the highest resident set size sampled',
    '(every 100 ms) during the contender\'s runs on that line.',
    '',
    '| Scenario | Upstream latency | Connections | Contender | req/s | p50 ms | p99 ms | Upstream calls/req | Peak RSS MB | gateway/direct | of ceiling |',
    '|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const m of input.measurements) {
    const direct = find(m.scenario, m.latencyMs, m.connections, 'direct');
    const ceiling = find(m.scenario, m.latencyMs, m.connections, 'ceiling');
    const calls = input.calls.find((c) => c.scenario === m.scenario && c.contender === m.contender);
    const ratio = m.kind !== 'direct' && direct ? pct(m.rps / direct.rps) : '';
    const ofCeiling = m.kind === 'gateway' && ceiling ? pct(m.rps / ceiling.rps) : '';
    push(
      `| ${SCENARIO_NAMES[m.scenario] ?? m.scenario} | ${m.latencyMs} ms | ${m.connections} | ${m.contender} | ${m.rps.toFixed(0)} | ${ms(m.p50)} | ${ms(m.p99)} | ${calls ? calls.calls : ''} | ${m.peakRss === undefined ? '' : mb(m.peakRss)} | ${ratio} | ${ofCeiling} |${m.failures > 0 ? ` ${m.failures} failed` : ''}`,
    );
  }
  push('');

  if (input.singleClient.length > 0) {
    push('## One client at a time, 5 ms upstream', '', '| Scenario | Contender | p50 ms | p99 ms | mean ms |', '|---|---|---:|---:|---:|');
    for (const s of input.singleClient) push(`| ${SCENARIO_NAMES[s.scenario] ?? s.scenario} | ${s.contender} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.mean)} |`);
    push('');
  }

  if (input.calls.length > 0) {
    push(
      '## Upstream calls per request',
      '',
      'Each contender in front of an emulator that records its requests (5 ms latency, so that concurrent calls overlap);',
      '"at once" is the most requests the emulator was handling at the same time. The gateway\'s pool allows 32 connections.',
      '',
      '| Scenario | Contender | Calls per request | At once |',
      '|---|---|---:|---:|',
    );
    for (const c of input.calls) push(`| ${SCENARIO_NAMES[c.scenario] ?? c.scenario} | ${c.contender} | ${c.calls} | ${c.maxConcurrent} |`);
    push('');
  }

  if (input.steady) {
    const { samples } = input.steady;
    push(
      '## Steady load',
      '',
      `The gateway under the four scenarios in turn on 10 connections, 0 ms upstream, for ${input.steady.seconds} s (${input.steady.requests} requests, ${input.steady.failures} failed).`,
      `Resident set size, one sample a second (MB): ${samples.map((bytes) => mb(bytes)).join(' ')}.`,
      '',
    );
  }
  push(
    '## Peak RSS per gateway process',
    '',
    '| Gateway | Upstream latency | Peak RSS over its life (MB) |',
    '|---|---|---:|',
    ...input.peakRss.map((p) => `| ${p.contender} | ${p.latencyMs} ms | ${mb(p.bytes)} |`),
    '',
  );
  return lines.join('\n');
}
