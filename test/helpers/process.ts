/**
 * The gateway as a separate process, started the way a user starts it (`npm start`, the image's
 * CMD): its output collected, its exit seen, and killed after each test that started one.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

/** The project root, where `npm start` runs; the gateway finds `schema/` from there. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** `npm start`'s command, `node [flags] dist/main.js`, split into its words. */
export const START_COMMAND = (
  (JSON.parse(readFileSync(`${PROJECT_ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts[
    'start'
  ] ?? ''
).split(' ');

export type StartedProcess = {
  child: ChildProcessWithoutNullStreams;
  /** everything written to stdout and stderr so far */
  output: () => string;
  /** the exit code (null after a signal) */
  exited: Promise<number | null>;
};

export type StartOptions = {
  /** where the process runs (a copy of the project, say) @default PROJECT_ROOT */
  cwd?: string;
};

/**
 * Kills what the returned functions start after each test of the calling file, so that a failed
 * test leaves no gateway running. Call it at the top level of a test file.
 */
export function useProcesses(): {
  startNode(nodeArgs: readonly string[], env?: Record<string, string>, options?: StartOptions): StartedProcess;
  /**
   * The gateway as `npm start` runs it, `node [its flags] [nodeArgs] dist/main.js [args]`: the build
   * test/global-setup.ts made for this run (`nodeArgs`: modules to `--import` first, say).
   */
  startGateway(env?: Record<string, string>, args?: readonly string[], nodeArgs?: readonly string[]): StartedProcess;
} {
  const children: ChildProcessWithoutNullStreams[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });
  const startAndKeep = (nodeArgs: readonly string[], env: Record<string, string> = {}, options: StartOptions = {}) => {
    const started = startNode(nodeArgs, env, options);
    children.push(started.child);
    return started;
  };
  return {
    startNode: startAndKeep,
    startGateway: (env = {}, args = [], nodeArgs = []) =>
      startAndKeep([...START_COMMAND.slice(1, -1), ...nodeArgs, START_COMMAND.at(-1) ?? 'dist/main.js', ...args], env),
  };
}

/**
 * Runs `node ...nodeArgs` in the project root (or `options.cwd`) with `HOST=127.0.0.1 PORT=0`,
 * `env`, and of the test runner's environment only PATH: no NODE_OPTIONS (and so no loader vitest
 * or tsx put there), no setting of this machine that would make the test depend on it.
 */
function startNode(nodeArgs: readonly string[], env: Record<string, string>, options: StartOptions): StartedProcess {
  const child = spawn(process.execPath, nodeArgs, {
    cwd: options.cwd ?? PROJECT_ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // Listened for from the start, so that an exit is seen however early it comes.
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, output: () => output, exited };
}

/**
 * Polls `read()` until it matches `pattern`; the error on timeout shows the output so far. The
 * default limit is a hang guard, far beyond a start on a loaded 2-core machine.
 */
export async function waitFor(read: () => string, pattern: RegExp, timeoutMs = 40_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = read().match(pattern);
    if (match) return match;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; output so far:\n${read()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
