/**
 * `npx tsx bench/floor.ts`: where the floor under any gateway on Node.js is, at a 5 ms upstream and
 * 10 connections. Scenarios 1 and 2 (one pet, the list), each contender in alternating rounds:
 *
 * - direct REST (autocannon calling the emulator);
 * - the least Node.js proxy (`bench/least-proxy.ts`: node:http in, an undici pool out), as in
 *   `npm run bench`;
 * - the same work with either HTTP library swapped for plain sockets (`bench/raw-proxy.ts`):
 *   node:http in and sockets out, sockets in and undici out, sockets both ways;
 * - the gateway as `npm start` runs it, one process, sharing off.
 *
 * Everything runs on the line the image ships (`--node=<path>` for another); the emulator, every
 * contender and the load generator share the machine's cores, as in `npm run bench`. Prints a
 * Markdown table: throughput as a share of direct REST's, p50 added to direct REST's, CPU time
 * per request of the contender's process. `--rounds=<n>` (default 5) of `--seconds=<s>` (3).
 */
import { execFileSync } from 'node:child_process';
import {
  buildGateway,
  runtime,
  shippedRuntime,
  startGateway,
  startReportingChild,
  useRuntime,
  type Child,
} from './children.js';
import { compare, type Contender } from './rounds.js';
import { CREDENTIAL_HEADERS, SCENARIOS, seedUpstream, type Scenario } from './scenarios.js';

const option = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(`--${name}=`.length);
const PLAN = { rounds: Number(option('rounds') ?? 5), seconds: Number(option('seconds') ?? 3), warmupSeconds: 1 };
const CONNECTIONS = 10;
const LATENCY_MS = 5;
const FLOOR_SCENARIOS = SCENARIOS.filter((each) => each.id === 1 || each.id === 2);
useRuntime(option('node') ?? shippedRuntime());

/** The one REST call of a scenario (scenarios 1 and 2). */
function rest(scenario: Scenario) {
  if (scenario.direct.kind !== 'rest') throw new Error(`scenario ${scenario.id} is not one REST call`);
  return scenario.direct;
}
const always = () => true;

const children: Child[] = [];
try {
  buildGateway();
  const emulator = await startReportingChild<{ petstoreUrl: string; plantsUrl: string }>(
    'emulator',
    'bench/emulator.ts',
    [String(LATENCY_MS)],
  );
  children.push(emulator);
  await seedUpstream(emulator.info.petstoreUrl);
  const contenders: Contender[] = [
    {
      label: 'direct REST',
      kind: 'direct',
      target: (scenario) => ({
        url: new URL(emulator.info.petstoreUrl).origin + rest(scenario).path,
        method: 'GET',
        headers: { accept: 'application/json', ...rest(scenario).headers },
      }),
      applies: always,
    },
  ];
  const proxies = [
    { label: 'least Node.js proxy: node:http in, undici out', script: 'bench/least-proxy.ts', sides: [] },
    { label: 'node:http in, sockets out', script: 'bench/raw-proxy.ts', sides: ['http', 'net'] },
    { label: 'sockets in, undici out', script: 'bench/raw-proxy.ts', sides: ['net', 'undici'] },
    { label: 'sockets both ways', script: 'bench/raw-proxy.ts', sides: ['net', 'net'] },
  ];
  for (const proxy of proxies) {
    const child = await startReportingChild<{ url: string }>(proxy.label, proxy.script, [
      emulator.info.petstoreUrl,
      ...proxy.sides,
    ]);
    children.push(child);
    contenders.push({
      label: proxy.label,
      kind: 'least proxy',
      pid: child.pid,
      target: (scenario) => ({
        url: child.info.url,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...rest(scenario).headers,
          'x-rest-path': rest(scenario).path,
        },
        body: scenario.graphql,
      }),
      applies: always,
    });
  }
  const gateway = await startGateway('floor gateway', {
    NODE_ENV: 'production',
    WORKERS: '1',
    UPSTREAM_DEDUPE: 'false',
    PETSTORE_URL: emulator.info.petstoreUrl,
    PLANTS_URL: emulator.info.plantsUrl,
  });
  children.push(gateway);
  contenders.push({
    label: 'gateway WORKERS=1, UPSTREAM_DEDUPE=false',
    kind: 'gateway',
    pid: gateway.pid,
    target: (scenario) => ({
      url: gateway.url,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...CREDENTIAL_HEADERS },
      body: scenario.graphql,
    }),
    applies: always,
  });

  const table = [
    `${LATENCY_MS} ms upstream, ${CONNECTIONS} connections, ${PLAN.rounds} rounds of ${PLAN.seconds} s, on Node.js ${execFileSync(runtime(), ['--version'], { encoding: 'utf8' }).trim()}`,
    '',
    '| Scenario | Contender | req/s | of direct REST | p50 added (ms) | CPU ms/req |',
    '|---|---|---:|---:|---:|---:|',
  ];
  for (const scenario of FLOOR_SCENARIOS) {
    const measurements = await compare(contenders, scenario, LATENCY_MS, CONNECTIONS, PLAN);
    const direct = measurements.find((each) => each.kind === 'direct');
    if (direct === undefined) throw new Error('no direct REST runs');
    for (const each of measurements) {
      const cells =
        each === direct
          ? [each.rps.toFixed(0), '', each.p50.toFixed(2), '']
          : [
              each.rps.toFixed(0),
              `${((100 * each.rps) / direct.rps).toFixed(0)}%`,
              `+${(each.p50 - direct.p50).toFixed(2)}`,
              each.cpuMsPerRequest?.toFixed(3) ?? '',
            ];
      table.push(`| ${scenario.id} ${scenario.name} | ${each.contender} | ${cells.join(' | ')} |`);
    }
  }
  console.log(`\n${table.join('\n')}`);
} finally {
  for (const child of children.reverse()) await child.stop();
}
