/**
 * A real Redis for a test file: Debian's `redis-server`, started on a free loopback port with
 * persistence off, stopped (and started again on the same port) when a test says, and stopped
 * after the file's tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

export type TestRedis = {
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  /** stops the server (SIGKILL: as a crash or a lost network would) */
  stop(): Promise<void>;
  /** starts it again on the same port, empty */
  start(): Promise<void>;
  /** runs redis-cli against it and returns its output */
  cli(...args: string[]): Promise<string>;
};

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function startServer(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`redis-server could not be run (apt-get install redis-server): ${error.message}`));
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return child;
}

async function kill(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** A Redis for the calling file: started before its tests, stopped after them. */
export function useRedis(): TestRedis {
  let port = 0;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    port = await freePort();
    child = await startServer(port);
  }, 20_000);
  afterAll(() => kill(child));
  return {
    get url() {
      return `redis://127.0.0.1:${port}`;
    },
    async stop() {
      await kill(child);
    },
    async start() {
      child = await startServer(port);
    },
    async cli(...args) {
      const cli = spawn('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
      let output = '';
      cli.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await once(cli, 'exit');
      return output;
    },
  };
}
