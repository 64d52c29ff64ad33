/**
 * The benchmark's processes: each contender and the upstream run as their own Node process
 * (`node --import tsx …`), so that none shares an event loop with the load generator.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';

const ROOT = new URL('../', import.meta.url);
/** Where the children's output goes (their logs are kept for a look after a run, never read during one). */
export const OUTPUT_DIR = new URL('bench/.out/', ROOT);

/** A running child process. */
export type Child = {
  name: string;
  process: ChildProcess;
  pid: number;
  /** stops it (SIGTERM, then SIGKILL after 5 s) and waits for its exit */
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

function stopper(name: string, child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
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
}

/**
 * Starts `node [nodeFlags] --import tsx <script> [args]` and waits for the first line it
 * prints on stdout, parsed as JSON (the child's address).
 */
export async function startReportingChild<T>(name: string, script: string, args: readonly string[] = [], env: Record<string, string> = {}): Promise<Child & { info: T }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const info = await new Promise<T>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready`)));
    lines.once('line', (line) => resolve(JSON.parse(line) as T));
  });
  // Anything printed later is drained so the child never blocks on a full pipe.
  lines.on('line', () => undefined);
  return { name, process: child, pid: child.pid ?? 0, info, stop: stopper(name, child) };
}

/**
 * Starts the gateway as `npm start` does (`node --import tsx src/main.ts`), with its own
 * environment, and waits until its GraphQL endpoint answers. Its log goes to a file in
 * `bench/.out/`: the gateway pays for writing it, as it would in production.
 */
export async function startGateway(
  name: string,
  env: Record<string, string>,
  options: { nodeFlags?: readonly string[]; script?: string } = {},
): Promise<Child & { url: string; logFile: string }> {
  mkdirSync(OUTPUT_DIR, { recursive: true });
  const port = await freePort();
  const logFile = new URL(`${name.replace(/[^\w.-]+/g, '-')}.log`, OUTPUT_DIR).pathname;
  const log = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), '--import', 'tsx', options.script ?? 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const url = `http://127.0.0.1:${port}/graphql`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}); see ${logFile}:\n${readFileSync(logFile, 'utf8').slice(-2000)}`);
    try {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > 30_000) throw new Error(`${name} did not answer within 30 s; see ${logFile}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { name, process: child, pid: child.pid ?? 0, url, logFile, stop: stopper(name, child) };
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
