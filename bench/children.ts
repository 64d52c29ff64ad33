/**
 * The benchmark's processes: each contender and the upstream run as their own Node process, so
 * that none shares an event loop with the load generator. The gateway runs compiled, as
 * `npm start` runs it (node with the flags of package.json's `start` script, read from there);
 * the helpers (emulator, ceiling, direct client) run from source under tsx.
 *
 * Every child runs on one runtime, {@link runtime} (`npm run bench` sets it to the Node.js line
 * the image ships, `--node=<path>` to another), unless a gateway is started with a `node` of its
 * own (the bench's comparison with an older line). The bench's own process (the load generator)
 * runs on whatever node ran `npm run bench`.
 *
 * A gateway may be a process tree (WORKERS > 1: a cluster primary and its workers), so what is
 * measured of it (CPU time, resident memory) is read from Linux `/proc` for every process of
 * the tree.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = new URL('../', import.meta.url);
/** Where the children's output goes (their logs are kept for a look after a run, never read during one). */
export const OUTPUT_DIR = new URL('bench/.out/', ROOT);

let runtimeNode = process.execPath;

/** The node binary the children run on. */
export function runtime(): string {
  return runtimeNode;
}

/**
 * The node binary of the line the image ships: `scripts/fetch-node.sh` pins it, fetches it from
 * the npm registry once and caches it. Returns its path.
 */
export function shippedRuntime(): string {
  const directory = execFileSync('bash', [new URL('scripts/fetch-node.sh', ROOT).pathname], { encoding: 'utf8' });
  return `${directory.trim()}/node`;
}

/** Sets the node binary the children run on (before any is started). */
export function useRuntime(node: string): void {
  runtimeNode = node;
}

/** A running child process. */
export type Child = {
  name: string;
  process: ChildProcess;
  pid: number;
  /** stops it (SIGTERM, then SIGKILL after 5 s) and waits for its exit; a gateway's leftover workers are killed too */
  stop(): Promise<void>;
};

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Stops a child: SIGTERM, SIGKILL after 5 s. With `tree`, the processes it had started (a
 * cluster primary's workers) are looked up first, and any still alive once it has exited —
 * the same process, by its start time — are killed by their id: a drained cluster leaves none.
 */
function stopper(name: string, child: ChildProcess, tree = false): () => Promise<void> {
  return async () => {
    const descendants =
      tree && child.pid !== undefined
        ? processTree(child.pid)
            .slice(1)
            .map((pid) => ({ pid, started: statOf(pid)?.startTime }))
        : [];
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      child.once('exit', () => {
        clearTimeout(killer);
        resolve();
      });
      if (!child.kill('SIGTERM')) {
        clearTimeout(killer);
        console.warn(`bench: could not signal ${name}`);
        resolve();
      }
    });
    for (const { pid, started } of descendants) {
      if (started === undefined || statOf(pid)?.startTime !== started) continue;
      console.warn(`bench: ${name} left process ${pid} running; killing it`);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone in the meantime
      }
    }
  };
}

/**
 * Starts `node --import tsx <script> [args]` and waits for the first line it prints on stdout,
 * parsed as JSON (the child's address).
 */
export async function startReportingChild<T>(
  name: string,
  script: string,
  args: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<Child & { info: T }> {
  const child = spawn(runtimeNode, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const info = await new Promise<T>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready`)));
    lines.once('line', (line) => resolve(JSON.parse(line) as T));
  });
  // Anything printed later is drained so the child never blocks on a full pipe.
  lines.on('line', () => undefined);
  return { name, process: child, pid: child.pid ?? 0, info, stop: stopper(name, child) };
}

/** What `npm start` runs after `node`, from package.json; the bench runs the gateway the same way. */
const DEFAULT_START_ARGS = [
  '--max-semi-space-size=8',
  '--heap-growing-percent=30',
  '--no-concurrent-recompilation',
  '--no-node-snapshot',
  '--no-sparkplug',
  '--no-maglev',
  'dist/main.js',
] as const;

/**
 * The node arguments of the `start` script (`node --max-semi-space-size=8 dist/main.js` →
 * `['--max-semi-space-size=8', 'dist/main.js']`), so that heap or other flags added there are
 * benchmarked too: this checkout's, or that of the checkout at `root` (a baseline build runs as
 * its own `npm start` ran it). A script that is not a plain `node …` command falls back to the
 * default.
 */
export function startArguments(root: string = ROOT.pathname): readonly string[] {
  try {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    const tokens = (manifest.scripts?.['start'] ?? '').trim().split(/\s+/);
    const plain =
      tokens[0] === 'node' &&
      tokens.length > 1 &&
      tokens.every((token) => /^[\w@%+=:,./-]+$/.test(token) && !token.includes('$'));
    if (plain) return tokens.slice(1);
    console.warn(`bench: the start script is not a plain node command; running node ${DEFAULT_START_ARGS.join(' ')}`);
  } catch (error) {
    console.warn(
      `bench: could not read the start script (${error instanceof Error ? error.message : String(error)}); running node ${DEFAULT_START_ARGS.join(' ')}`,
    );
  }
  return DEFAULT_START_ARGS;
}

/**
 * Compiles the gateway to `dist/` (`npm run build`), as `npm start` does before it starts.
 * `modules`: one module per source file instead of the bundle (`npm run build -- --modules`), so
 * that a CPU profile names each of our modules.
 */
export function buildGateway(options: { modules?: boolean } = {}): void {
  const started = performance.now();
  const args = ['run', '--silent', 'build', ...(options.modules ? ['--', '--modules'] : [])];
  execFileSync('npm', args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  console.log(`built dist/ in ${Math.round(performance.now() - started)} ms`);
}

/**
 * Another commit's gateway, built apart for a comparison: its tree (`git archive`) in
 * `bench/.out/baseline-<commit>/` with this checkout's `node_modules`, built there by its own
 * `npm run build`. Returns the directory, to start it from (`startGateway`'s `root`).
 */
export function buildBaseline(ref: string): { root: string; commit: string } {
  const commit = execFileSync('git', ['rev-parse', '--short', `${ref}^{commit}`], { encoding: 'utf8' }).trim();
  const root = new URL(`baseline-${commit}/`, OUTPUT_DIR).pathname;
  if (!existsSync(new URL('dist/main.js', `file://${root}`))) {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    execFileSync('bash', ['-c', `git archive ${commit} | tar -x -C "${root}"`], { stdio: 'inherit' });
    symlinkSync(new URL('node_modules', ROOT).pathname, `${root}/node_modules`);
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  }
  return { root, commit };
}

/** The request a gateway must answer to count as started, and how its answer is checked. */
export type Probe = { body: string; headers?: Record<string, string> };
const TYPENAME_PROBE: Probe = { body: '{"query":"{ __typename }"}' };

/**
 * Starts the compiled gateway as `npm start` does (the node arguments of the start script), on
 * {@link runtime} or on `options.node`, from this checkout or from another's `options.root` (a
 * baseline build, with that checkout's start script), with its own environment, and waits until
 * its GraphQL endpoint answers `probe` with a 2xx and no `errors`. `startupMs` is the time from the spawn to that answer (polled every 10 ms).
 * Its log goes to a file in `bench/.out/`: the gateway pays for writing it, as it would in
 * production.
 */
export async function startGateway(
  name: string,
  env: Record<string, string>,
  options: { nodeFlags?: readonly string[]; probe?: Probe; node?: string; root?: string } = {},
): Promise<Child & { url: string; logFile: string; startupMs: number }> {
  mkdirSync(OUTPUT_DIR, { recursive: true });
  const port = await freePort();
  const logFile = new URL(`${name.replace(/[^\w.-]+/g, '-')}.log`, OUTPUT_DIR).pathname;
  const log = openSync(logFile, 'w');
  const probe = options.probe ?? TYPENAME_PROBE;
  const url = `http://127.0.0.1:${port}/graphql`;
  const spawned = performance.now();
  const child = spawn(options.node ?? runtimeNode, [...(options.nodeFlags ?? []), ...startArguments(options.root)], {
    cwd: options.root ?? ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  let startupMs = Number.NaN;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(
        `${name} exited (${child.exitCode}); see ${logFile}:\n${readFileSync(logFile, 'utf8').slice(-2000)}`,
      );
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...probe.headers },
        body: probe.body,
      });
      const text = await response.text();
      if (response.ok && (JSON.parse(text) as { errors?: unknown }).errors === undefined) {
        startupMs = performance.now() - spawned;
        break;
      }
    } catch {
      // not listening yet
    }
    if (performance.now() - spawned > 30_000) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not answer within 30 s; see ${logFile}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { name, process: child, pid: child.pid ?? 0, url, logFile, startupMs, stop: stopper(name, child, true) };
}

/** Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`; 100 on Linux). */
export const CLOCK_TICKS = (() => {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(value) && value > 0 ? value : 100;
  } catch {
    return 100;
  }
})();

type Stat = { ppid: number; cpuTicks: number; startTime: number };

/** Fields of `/proc/<pid>/stat` (after the command name, which may hold spaces): parent, utime + stime, start time. */
function statOf(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields from the 3rd (state) on; utime and stime are the 14th and 15th, starttime the 22nd.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return {
      ppid: Number(fields[1]),
      cpuTicks: Number(fields[11]) + Number(fields[12]),
      startTime: Number(fields[19]),
    };
  } catch {
    return undefined;
  }
}

/**
 * The direct children of a process: `/proc/<pid>/task/<tid>/children` where the kernel has it, else a
 * scan of every process's parent.
 */
function childrenOf(pid: number): number[] {
  try {
    const out: number[] = [];
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (text !== '') out.push(...text.split(/\s+/).map(Number));
    }
    return out;
  } catch {
    return readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number)
      .filter((each) => statOf(each)?.ppid === pid);
  }
}

/** A process and all its descendants (the root first): a cluster primary and its workers. */
export function processTree(root: number): number[] {
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    if (statOf(pid) === undefined) continue;
    out.push(pid);
    queue.push(...childrenOf(pid));
  }
  return out;
}

/** User + system CPU time so far of each process, in clock ticks (processes gone are left out). */
export function cpuTicksOf(pids: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    const stat = statOf(pid);
    if (stat !== undefined) out.set(pid, stat.cpuTicks);
  }
  return out;
}

/**
 * CPU time a process tree spent between two readings, in milliseconds: for each process of the
 * second reading, its ticks less those of the first (a process started in between counts whole).
 */
export function cpuMsBetween(before: Map<number, number>, after: Map<number, number>): number {
  let ticks = 0;
  for (const [pid, now] of after) ticks += now - (before.get(pid) ?? 0);
  return (ticks * 1000) / CLOCK_TICKS;
}

/** A process's resident set size now and at its peak (VmHWM), in bytes (Linux `/proc`). */
export function memoryOf(pid: number): { rss: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return { rss: 0, peak: 0 };
  }
}
