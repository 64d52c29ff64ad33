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
  cpuMsBetween,
  cpuTicksOf,
  shippedRuntime,
  startGateway,
  startReportingChild,
  useRuntime,
  type Child,
} from './children.js';
import { percentile, runLoad, type Target } from './load.js';
import { CREDENTIAL_HEADERS, SCENARIOS, seedUpstream } from './scenarios.js';

const option = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(`--${name}=`.length);
const ROUNDS = Number(option('rounds') ?? 5);
const SECONDS = Number(option('seconds') ?? 3);
const CONNECTIONS = 10;
const LATENCY_MS = 5;
useRuntime(option('node') ?? shippedRuntime());

type Contender = { label: string; pid?: number; target(scenario: (typeof SCENARIOS)[number]): Target };

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
  const rest = (scenario: (typeof SCENARIOS)[number]) => {
    if (scenario.direct.kind !== 'rest') throw new Error(`scenario ${scenario.id} is not one REST call`);
    return scenario.direct;
  };
  const contenders: Contender[] = [
    {
      label: 'direct REST',
      target: (scenario) => ({
        url: new URL(emulator.info.petstoreUrl).origin + rest(scenario).path,
        method: 'GET',
        headers: { accept: 'application/json', ...rest(scenario).headers },
      }),
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
    pid: gateway.pid,
    target: (scenario) => ({
      url: gateway.url,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...CREDENTIAL_HEADERS },
      body: scenario.graphql,
    }),
  });

  console.log(
    `${LATENCY_MS} ms upstream, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s, on Node.js ${execFileSync(runtime(), ['--version'], { encoding: 'utf8' }).trim()}\n`,
  );
  console.log('| Scenario | Contender | req/s | of direct REST | p50 added (ms) | CPU ms/req |');
  console.log('|---|---|---:|---:|---:|---:|');
  for (const scenario of SCENARIOS.filter((each) => each.id === 1 || each.id === 2)) {
    const runs = new Map(
      contenders.map((each) => [
        each.label,
        { requests: 0, seconds: 0, cpuMs: 0, latencies: [] as number[], failures: 0 },
      ]),
    );
    for (const contender of contenders)
      await runLoad(contender.target(scenario), { connections: CONNECTIONS, seconds: 1 });
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let index = 0; index < contenders.length; index += 1) {
        const contender = contenders[(index + round) % contenders.length] as Contender;
        const sum = runs.get(contender.label);
        if (sum === undefined) continue;
        const before = contender.pid === undefined ? undefined : cpuTicksOf([contender.pid]);
        const result = await runLoad(contender.target(scenario), { connections: CONNECTIONS, seconds: SECONDS });
        if (before !== undefined && contender.pid !== undefined)
          sum.cpuMs += cpuMsBetween(before, cpuTicksOf([contender.pid]));
        sum.requests += result.requests;
        sum.seconds += result.seconds;
        sum.failures += result.failures;
        sum.latencies.push(...result.latencies);
      }
    }
    const direct = runs.get('direct REST');
    if (direct === undefined) throw new Error('no direct REST runs');
    const directRps = direct.requests / direct.seconds;
    const directP50 = percentile(direct.latencies, 50);
    for (const contender of contenders) {
      const sum = runs.get(contender.label);
      if (sum === undefined) continue;
      const rps = sum.requests / sum.seconds;
      const p50 = percentile(sum.latencies, 50);
      const cells = [
        `${scenario.id} ${scenario.name}`,
        contender.label,
        rps.toFixed(0),
        contender.pid === undefined ? '' : `${((100 * rps) / directRps).toFixed(0)}%`,
        contender.pid === undefined ? directP50.toFixed(2) : `+${(p50 - directP50).toFixed(2)}`,
        contender.pid === undefined ? '' : (sum.cpuMs / sum.requests).toFixed(3),
      ];
      console.log(`| ${cells.join(' | ')} |${sum.failures > 0 ? ` FAILURES ${sum.failures}` : ''}`);
    }
  }
} finally {
  for (const child of children.reverse()) await child.stop();
}
