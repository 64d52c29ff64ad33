/**
 * WORKERS: the gateway on every core, as node:cluster workers behind one port. Started as a
 * user starts it, in a process: requests are served by more than one worker, a killed worker is
 * replaced, SIGTERM drains every worker, /metrics sums them, and rate limits are exact whichever
 * worker a request lands on. Also how `auto` counts cores (a container's CPU quota included).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { availableCores, cpuQuota, type ReadText } from '../src/cluster/cores.js';
import { EVENTUALLY, until } from './helpers/clock.js';
import { useProcesses, waitFor } from './helpers/process.js';
import { useRedis } from './helpers/redis.js';
import { hold, json, useScriptedUpstream } from './helpers/scripted-upstream.js';
import { postGraphQL } from './helpers/stack.js';

// Each test starts a cluster of gateway processes: the suite's 15 s hang guard is too short for
// that on a loaded 2-core machine.
vi.setConfig({ testTimeout: 60_000 });

const processes = useProcesses();
const redis = useRedis();

/** Starts the gateway with two workers and waits for its banner; its URL and the workers' log lines. */
async function startCluster(env: Record<string, string> = {}) {
  const started = processes.startGateway({ WORKERS: '2', ...env });
  const [, url = ''] = await waitFor(started.output, /GraphQL gateway ready: (http:\/\/\S+\/graphql)/, 20_000);
  const requestLines = () =>
    started
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{') && line.includes('"requestId"') && line.includes('"path":"/graphql"'))
      .map((line) => JSON.parse(line) as { pid: number; status: number });
  return { ...started, url, requestLines };
}

/** The workers a cluster's primary (`primary`, a pid) has running: its child processes running the gateway (Linux: /proc). */
function workersOf(primary: number): number[] {
  const pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  return pids.map(Number).filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // After the command name in parentheses: the state, then the parent's pid.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return parent === primary && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('main.js');
    } catch {
      // It ended meanwhile.
      return false;
    }
  });
}

/** One query on a new connection each time, so that the cluster spreads them over its workers. */
function query(url: string, text = '{ pet(id: 1) { name } }', headers: Record<string, string> = {}) {
  return postGraphQL(url, text, {}, { api_key: 'demo', connection: 'close', ...headers });
}

describe('WORKERS=2 on the embedded emulator', () => {
  it('serves queries from more than one worker, and says how many processes run', async () => {
    const { url, output, requestLines } = await startCluster();

    const results = [];
    for (let index = 0; index < 8; index += 1) results.push(await query(url));

    expect(
      results.every((result) => result.status === 200 && JSON.stringify(result.data) === '{"pet":{"name":"Cat 1"}}'),
    ).toBe(true);
    expect(output()).toContain('Workers: 2 processes (WORKERS)');
    // Log lines are written in batches (at most 250 ms late).
    await expect.poll(() => requestLines().length, EVENTUALLY).toBe(8);
    expect(new Set(requestLines().map((line) => line.pid)).size).toBe(2);
  });

  it('replaces a worker that is killed, logging it, and keeps answering', async () => {
    const { url, output, requestLines } = await startCluster();
    for (let index = 0; index < 4; index += 1) await query(url);
    await expect.poll(() => requestLines().length, EVENTUALLY).toBe(4);
    const [victim] = [...new Set(requestLines().map((line) => line.pid))];

    process.kill(victim as number, 'SIGKILL');

    const [line] = await waitFor(
      output,
      new RegExp(`\\{[^\\n]*"msg":"worker ${victim} exited \\(SIGKILL\\) after \\d+ s; starting another in 100 ms"\\}`),
    );
    expect(JSON.parse(line)).toMatchObject({ level: 'warn', worker: victim, signal: 'SIGKILL', restartInMs: 100 });
    await waitFor(output, /"msg":"worker \d+ is serving"/, 20_000);
    for (let index = 0; index < 8; index += 1) expect((await query(url)).data).toEqual({ pet: { name: 'Cat 1' } });
    await expect.poll(() => requestLines().length, EVENTUALLY).toBe(12);
    const laterPids = new Set(
      requestLines()
        .slice(4)
        .map((line) => line.pid),
    );
    expect(laterPids.has(victim as number)).toBe(false);
    expect(laterPids.size).toBe(2);
  });

  it('reports in /metrics the operations of every worker, summed', async () => {
    const { url, requestLines } = await startCluster();
    for (let index = 0; index < 6; index += 1) await query(url);
    await expect.poll(() => requestLines().length, EVENTUALLY).toBe(6);
    expect(new Set(requestLines().map((line) => line.pid)).size).toBe(2);

    const metrics = await (
      await fetch(url.replace('/graphql', '/metrics'), { headers: { connection: 'close' } })
    ).text();

    expect(metrics).toMatch(
      /^graphql_operations_total\{operation_name="anonymous",operation_type="query",result="success"\} 6$/m,
    );
    expect(metrics).toMatch(
      /^upstream_requests_total\{service="petstore",operation="getPetById",method="GET",status="200",outcome="ok"\} 6$/m,
    );
  });

  it('answers /metrics at once while a killed worker is being replaced, with the counts of the workers that serve', async () => {
    const { url, output, requestLines, child } = await startCluster();
    for (let index = 0; index < 6; index += 1) await query(url);
    await expect.poll(() => requestLines().length, EVENTUALLY).toBe(6);
    const [victim, survivor] = [...new Set(requestLines().map((line) => line.pid))];
    const servedBySurvivor = requestLines().filter((line) => line.pid === survivor).length;
    process.kill(victim as number, 'SIGKILL');
    await waitFor(output, new RegExp(`"msg":"worker ${victim} exited`));
    // Its replacement is forked after 100 ms and takes a second or more to build its gateway: asked meanwhile.
    await until(
      () => workersOf(child.pid ?? 0).some((pid) => pid !== victim && pid !== survivor),
      'the replacement worker to be forked',
    );
    expect(output()).not.toMatch(/"msg":"worker \d+ is serving"/);

    const response = await fetch(url.replace('/graphql', '/metrics'), { headers: { connection: 'close' } });

    expect(response.status).toBe(200);
    // Answered before the replacement serves, without waiting for it (nor for the dead worker) to answer.
    expect(output()).not.toMatch(/"msg":"worker \d+ is serving"/);
    expect(output()).not.toContain('/metrics without worker');
    // A dead worker's counts go with it: Prometheus reads the drop as a counter reset.
    expect(await response.text()).toMatch(
      new RegExp(
        `^graphql_operations_total\\{operation_name="anonymous",operation_type="query",result="success"\\} ${servedBySurvivor}$`,
        'm',
      ),
    );
  });

  it('keeps a rate limit exact across workers: the 6th request of a minute is refused, whichever worker gets it', async () => {
    const { url, requestLines } = await startCluster({ RATE_LIMIT_PER_MINUTE: '5' });

    const statuses = [];
    for (let index = 0; index < 7; index += 1) statuses.push((await query(url)).status);

    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    await expect.poll(() => requestLines().length, EVENTUALLY).toBe(7);
    expect(new Set(requestLines().map((line) => line.pid)).size).toBe(2);
  });

  it('with REDIS_URL keeps the counters in Redis, each worker connected to it, and still exact', async () => {
    const { url, requestLines } = await startCluster({ RATE_LIMIT_PER_MINUTE: '5', REDIS_URL: redis.url });

    // From the first request on: a worker takes none before its Redis connection is ready.
    const statuses = [];
    for (let index = 0; index < 7; index += 1) statuses.push((await query(url)).status);

    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    // Both workers connected: Redis lists their two connections and this redis-cli.
    expect((await redis.cli('CLIENT', 'LIST')).trim().split('\n').length).toBeGreaterThanOrEqual(3);
    await expect.poll(() => requestLines().length, EVENTUALLY).toBe(7);
    expect(new Set(requestLines().map((line) => line.pid)).size).toBe(2);
    // One counter, in Redis: every request counted, the refused ones too.
    const keys = (await redis.cli('--scan', '--pattern', 'rest-graphql-gateway:rate-limit:*')).trim().split('\n');
    expect(keys).toHaveLength(1);
    expect((await redis.cli('GET', keys[0] ?? '')).trim()).toBe('7');
  });
});

describe('WORKERS=2 in front of upstreams', () => {
  const scripted = useScriptedUpstream();

  it('on SIGTERM lets the slow query in flight finish in its worker, stops every worker, and exits 0', async () => {
    const upstream = scripted();
    // The query's answer is held until the drain has begun: in flight through the signal, however fast the machine.
    const held = hold(json(200, { id: 1, name: 'Cat 1', photoUrls: [], tags: [], status: 'available' }));
    upstream.answer(held.answer);
    const { child, output, exited, url } = await startCluster({
      PETSTORE_URL: `${upstream.url}/api/v3`,
      PLANTS_URL: upstream.url,
    });
    const slow = query(url);
    await expect.poll(() => upstream.requests.length, EVENTUALLY).toBe(1);

    child.kill('SIGTERM');

    await waitFor(output, /"msg":"SIGTERM: draining 2 worker\(s\)"/);
    expect(child.exitCode).toBeNull();
    held.release();
    expect(await slow).toEqual({ status: 200, data: { pet: { name: 'Cat 1' } } });
    expect(await exited).toBe(0);
    expect(output()).toMatch(/\nstopped\n/);
    expect(upstream.requests.map((request) => `${request.method} ${request.url}`)).toEqual(['GET /api/v3/pet/1']);
  });
});

describe('WORKERS=auto', () => {
  const files =
    (entries: Record<string, string>): ReadText =>
    (path) =>
      entries[path];

  it('starts as many workers as the cores the process may use', async () => {
    const { output } = await startCluster({ WORKERS: 'auto' });
    const cores = availableCores();

    expect(output()).toContain(
      cores === 1 ? 'Workers: 1 process' : `Workers: ${cores} processes (WORKERS=auto: the cores this process may use)`,
    );
  });

  it('reads a cgroup v2 quota from cpu.max in the process own cgroup', () => {
    const read = files({
      '/proc/self/cgroup': '0::/kubepods/pod1/app\n',
      '/sys/fs/cgroup/kubepods/pod1/app/cpu.max': '150000 100000\n',
    });

    expect(cpuQuota(read)).toBe(1.5);
    expect(availableCores(read, 8)).toBe(2);
  });

  it('reads "max" as no quota', () => {
    const read = files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': 'max 100000\n' });

    expect(cpuQuota(read)).toBeUndefined();
    expect(availableCores(read, 8)).toBe(8);
  });

  it('reads a cgroup v1 quota from cpu.cfs_quota_us and cpu.cfs_period_us', () => {
    const read = files({
      '/proc/self/cgroup': '4:cpu,cpuacct:/docker/abc\n3:memory:/docker/abc\n',
      '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us': '300000\n',
      '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000\n',
    });

    expect(cpuQuota(read)).toBe(3);
    expect(availableCores(read, 16)).toBe(3);
  });

  it('reads -1 in cfs_quota_us as no quota, and never counts fewer than 1 core nor more than the CPUs', () => {
    const unlimited = files({
      '/proc/self/cgroup': '4:cpu:/\n',
      '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1\n',
      '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n',
    });
    const tiny = files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': '10000 100000\n' });

    expect(availableCores(unlimited, 4)).toBe(4);
    expect(availableCores(tiny, 4)).toBe(1);
    expect(availableCores(files({}), 2)).toBe(2);
  });
});
