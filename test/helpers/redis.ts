/**
 * A real Redis for a test file (`redis-server.ts`): started before its tests, stopped after them,
 * and stopped or started again when a test says.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll } from 'vitest';
import { startRedisServer, type RedisServer } from './redis-server.js';

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

export function useRedis(): TestRedis {
  let server: RedisServer | undefined;
  const current = () => {
    if (!server) throw new Error('useRedis: the server is only there inside tests');
    return server;
  };
  beforeAll(async () => {
    server = await startRedisServer();
  }, 20_000);
  afterAll(() => server?.stop());
  return {
    get url() {
      return current().url;
    },
    stop: () => current().stop(),
    start: () => current().restart(),
    async cli(...args) {
      const cli = spawn('redis-cli', ['-h', '127.0.0.1', '-p', String(current().port), ...args]);
      let output = '';
      cli.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await once(cli, 'exit');
      return output;
    },
  };
}
