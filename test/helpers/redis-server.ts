/**
 * Debian's `redis-server` as a child process on a loopback port, persistence off: for the Redis
 * tests (through `useRedis`) and the benchmark's Redis rows.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

export type RedisServer = {
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  /** kills the server (SIGKILL: as a crash or a lost network would) */
  stop(): Promise<void>;
  /** starts it again on the same port, empty */
  restart(): Promise<void>;
};

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function spawnServer(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
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

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** Starts a redis-server on a free loopback port. */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child = await spawnServer(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => kill(child),
    async restart() {
      await kill(child);
      child = await spawnServer(port);
    },
  };
}
