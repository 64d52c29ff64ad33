/**
 * Contenders measured side by side: each one's runs alternate with the others', round by round,
 * so that a machine getting faster or slower affects all of them alike. Used by `npm run bench`
 * (run.ts) and `bench/floor.ts`.
 */
import { cpuMsBetween, cpuTicksOf, processTree } from './children.js';
import { percentile, runLoad, type RunResult, type Target } from './load.js';
import type { Measurement } from './report.js';
import type { Scenario } from './scenarios.js';

/** Something the load generator drives: direct REST, a gateway, the ceiling or a proxy. */
export type Contender = {
  label: string;
  kind: 'direct' | 'gateway' | 'ceiling' | 'least proxy';
  /** the root of the contender's process tree (GraphQL contenders), whose CPU time and memory are measured */
  pid?: number;
  target(scenario: Scenario): Target;
  applies(scenario: Scenario, connections?: number): boolean;
};

/**
 * One measured run of a contender. For a GraphQL contender, the user + system CPU time of each
 * process of its tree (primary and workers) is read from `/proc` before and after the run, and
 * the resident set size of each is sampled during it.
 */
export async function measuredRun(
  contender: Contender,
  target: Target,
  connections: number,
  seconds: number,
): Promise<RunResult & { cpuMs: number }> {
  if (contender.pid === undefined) return { ...(await runLoad(target, { connections, seconds })), cpuMs: 0 };
  const tree = processTree(contender.pid);
  const before = cpuTicksOf(tree);
  const result = await runLoad(target, { connections, seconds, watchPids: tree });
  const after = cpuTicksOf(processTree(contender.pid));
  return { ...result, cpuMs: cpuMsBetween(before, after) };
}

/**
 * Runs every applicable contender `plan.rounds` times on one configuration, alternating, after a
 * warm-up of each, and merges the rounds.
 */
export async function compare(
  contenders: readonly Contender[],
  scenario: Scenario,
  latencyMs: number,
  connections: number,
  plan: { rounds: number; seconds: number; warmupSeconds: number },
): Promise<Measurement[]> {
  const { rounds, seconds, warmupSeconds } = plan;
  const active = contenders.filter((contender) => contender.applies(scenario, connections));
  // Direct REST alone compares with nothing (scenario 5 at 5 ms or 50 connections).
  if (active.every((contender) => contender.kind === 'direct')) return [];
  const runs = new Map<string, (RunResult & { cpuMs: number })[]>(active.map((contender) => [contender.label, []]));
  for (const contender of active) await runLoad(contender.target(scenario), { connections, seconds: warmupSeconds });
  for (let round = 0; round < rounds; round += 1) {
    // Each round starts with a different contender, so none is always first after a pause.
    const order = active.map((_, index) => active[(index + round) % active.length] as Contender);
    for (const contender of order)
      runs.get(contender.label)?.push(await measuredRun(contender, contender.target(scenario), connections, seconds));
  }
  return active.map((contender) => {
    const results = runs.get(contender.label) ?? [];
    const latencies = results.flatMap((result) => result.latencies);
    const requests = results.reduce((sum, result) => sum + result.requests, 0);
    const cpuMs = results.reduce((sum, result) => sum + result.cpuMs, 0);
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
      bytesPerAnswer: requests === 0 ? undefined : results.reduce((sum, result) => sum + result.bytes, 0) / requests,
      cpuMsPerRequest: contender.pid === undefined || requests === 0 ? undefined : cpuMs / requests,
      peakRss: contender.pid === undefined ? undefined : Math.max(...results.map((result) => result.peakRss)),
    };
    console.log(
      `  s${scenario.id} ${latencyMs}ms c${connections} ${contender.label.padEnd(38)} ${measurement.rps.toFixed(0).padStart(6)} req/s  p50 ${measurement.p50.toFixed(2)} ms  p99 ${measurement.p99.toFixed(2)} ms${measurement.cpuMsPerRequest !== undefined ? `  cpu ${measurement.cpuMsPerRequest.toFixed(3)} ms/req` : ''}${measurement.failures ? `  FAILURES ${measurement.failures}` : ''}`,
    );
    return measurement;
  });
}
