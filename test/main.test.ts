/**
 * `npm start` as a newcomer runs it: the gateway on the embedded emulator, answering the first
 * query, and stopping cleanly on SIGTERM; a bad setting stops it with a message naming it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { listen, postGraphQL, stop } from './helpers/stack.js';

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function start(env: Record<string, string>, args: string[] = []) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    env: { PATH: process.env['PATH'] ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
  });
  children.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

async function waitFor(read: () => string, pattern: RegExp, timeoutMs = 10_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = read().match(pattern);
    if (match) return match;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; output so far:\n${read()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('npm start', () => {
  it('runs on the embedded emulator, answers a query, and exits 0 on SIGTERM', async () => {
    const { child, output } = start({});

    const [, url] = await waitFor(output, /GraphQL gateway ready: (http:\/\/\S+\/graphql)/);
    expect(output()).toMatch(/Upstreams: embedded emulator/);
    const result = await postGraphQL(url as string, '{ pet(id: 1) { name } user(username: "user1") { email } }', {}, { api_key: 'demo' });
    expect(result.data).toEqual({ pet: { name: 'Cat 1' }, user: { email: 'email1@test.com' } });

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it('stops with exit code 1 and a message naming a bad setting', async () => {
    const { child, output } = start({ PORT: 'eighty' });

    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(output()).toMatch(/Configuration error: PORT must be an integer/);
  });

  it('stops with exit code 1 and a message naming PORT when the port is in use', async () => {
    const { server, url } = await listen(() => undefined);
    try {
      const { child, output } = start({ PORT: new URL(url).port });

      const [code] = await once(child, 'exit');
      expect(code).toBe(1);
      expect(output()).toMatch(/Configuration error: cannot listen on HOST=127\.0\.0\.1 PORT=\d+: the port is in use/);
      expect(output()).not.toMatch(/\n\s+at /);
    } finally {
      await stop(server);
    }
  });

  it('refuses to start with only one upstream URL set', async () => {
    const { child, output } = start({ PETSTORE_URL: 'http://127.0.0.1:9/api/v3' });

    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(output()).toMatch(/PLANTS_URL must be set too/);
  });

  it('prints every setting with --help', async () => {
    const { child, output } = start({}, ['--help']);

    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    for (const flag of ['--port', '--petstore-url', '--plants-url', '--petstore-body-format', '--upstream-timeout-ms']) expect(output()).toContain(flag);
  });
});
