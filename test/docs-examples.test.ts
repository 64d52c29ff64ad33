/**
 * Every example of the user pages runs (the convention, for whoever writes a page):
 *
 * - ```graphql: sent to a gateway on the embedded emulator with the demo credentials; it must answer
 *   data without errors (an `@live`, `@defer` or `@stream` document as server-sent events, its first
 *   event). Variables come from an HTML comment right above the block: `<!-- variables: {…} -->`.
 * - ```sh: each command runs or is checked: `curl` is sent to that gateway (`localhost:4000` is its
 *   address); `npm start`, `npm run …` and `docker run` are checked against package.json's scripts
 *   and the settings (`loadConfig` must accept every variable and flag given).
 * - ```json right after a ```graphql or `curl` block is the answer shown: the real answer must equal
 *   it (a string `…` stands for any string; durations and ages for any number). Elsewhere it must parse.
 * - ```yaml must parse; ```text is output shown and is not run. No other language is allowed.
 *
 * A page runs on a gateway of its own (a fresh emulator, its examples in order), with the settings
 * of its `<!-- examples: NAME=value … -->` comment.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { EMULATOR_SETTINGS, loadConfig, SETTINGS } from '../src/config/index.js';
import { startEmulator, type Emulator } from '../src/emulator/server.js';
import type { GatewayConfig } from '../src/gateway.js';
import { USER_PAGES } from './helpers/docs.js';
import { PROJECT_ROOT } from './helpers/process.js';
import { ALL_CREDENTIALS, serveObserved, type ObservedGateway } from './helpers/stack.js';

const read = (file: string) => readFileSync(join(PROJECT_ROOT, file), 'utf8');
const SCRIPTS = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
/** Variables besides the settings that a page may give: Node's and OpenTelemetry's own. */
const OTHER_VARIABLES = /^(NODE_ENV|NODE_OPTIONS|OTEL_[A-Z_]+)$/;
const KNOWN = new Set<string>([...SETTINGS, ...EMULATOR_SETTINGS].map((setting) => setting.env));
/** Commands a page may show that another test runs, by the test that does. */
const RUN_ELSEWHERE: Record<string, string> = {
  'npx graphql-codegen --config codegen.yml': 'test/trusted-documents-example.test.ts',
  'docker build -t petstore-gateway .': 'test/deploy-dockerfile.test.ts',
  // The image the Kubernetes example names: deploy-files checks the reference against gateway.yaml and the version.
  'docker build -t registry.example.com/petstore-gateway:1.0.0 .': 'test/deploy-files.test.ts',
  'docker push registry.example.com/petstore-gateway:1.0.0': 'test/deploy-files.test.ts',
};

/** A fenced block of a page; `next`: nothing but blank lines between it and the block before. */
type Block = { language: string; text: string; next: boolean; variables?: Record<string, unknown> };

/** The page's fenced blocks in order, each with the variables its comment gives. */
function blocks(page: string): Block[] {
  let end = -1;
  return [...page.matchAll(/(?:<!-- variables: (.*?) -->\n\n)?^```(\w*)\n([\s\S]*?)^```$/gm)].map(
    ({ 0: whole, 1: variables, 2: language = '', 3: text = '', index }) => {
      const next = end >= 0 && page.slice(end, index).trim() === '';
      end = index + whole.length;
      return {
        language,
        text,
        next,
        ...(variables ? { variables: JSON.parse(variables) as Record<string, unknown> } : {}),
      };
    },
  );
}

/** The settings a page's examples run with (its `<!-- examples: … -->` comment), as environment variables. */
function pageSettings(page: string): Record<string, string> {
  const [, list = ''] = /<!-- examples: (.*?) -->/.exec(page) ?? [];
  const pairs = list.split(/\s+/).filter(Boolean);
  return Object.fromEntries(
    pairs.map((pair) => {
      const [name = '', value = ''] = pair.split('=');
      return [name, value.startsWith('docs/') ? join(PROJECT_ROOT, value) : value];
    }),
  );
}

/** The words of a shell command as sh reads them: quotes, `\` escapes and line continuations. */
function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i] ?? '';
    if (c === '\\' && command[i + 1] === '\n') i++;
    else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      word = (word ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let text = '';
      for (i++; command[i] !== '"'; i++) text += command[i] === '\\' ? (command[++i] ?? '') : command[i];
      word = (word ?? '') + text;
    } else if (c === '\\') word = (word ?? '') + (command[++i] ?? '');
    else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** A block's commands: comments dropped, continued lines joined, `&&` chains split. */
function commands(script: string): string[] {
  return script
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => (line.trimStart().startsWith('#') ? '' : line.replace(/\s+#\s.*$/, '').trim()))
    .filter(Boolean)
    .flatMap((line) => line.split(' && '));
}

/** A `curl` command as a fetch to the gateway. */
function curlRequest(words: string[], origin: string): { url: string; init: RequestInit } {
  const headers = new Headers();
  let url = '';
  let method: string | undefined;
  let body: string | FormData | undefined;
  const query: string[] = [];
  let get = false;
  for (let i = 1; i < words.length; i++) {
    const word = words[i] ?? '';
    const next = () => words[++i] ?? '';
    if (word === '-H') {
      const header = next();
      headers.set(header.slice(0, header.indexOf(':')), header.slice(header.indexOf(':') + 1).trim());
    } else if (word === '-d') body = next();
    else if (word === '--data-urlencode') {
      const [name, ...value] = next().split('=');
      query.push(`${name}=${encodeURIComponent(value.join('='))}`);
    } else if (word === '-F') {
      const [name = '', ...rest] = next().split('=');
      const value = rest.join('=');
      const form = body instanceof FormData ? body : new FormData();
      if (value.startsWith('@')) form.set(name, new Blob([readFileSync(join(PROJECT_ROOT, value.slice(1)))]), name);
      else form.set(name, value);
      body = form;
    } else if (word === '-X') method = next();
    else if (word === '-G') get = true;
    else if (/^-[sNi]+$/.test(word)) continue;
    else if (/^(https?:\/\/)?localhost:4000/.test(word)) url = word.replace(/^(https?:\/\/)?localhost:4000/, origin);
    else throw new Error(`the test does not know the curl option ${word}`);
  }
  if (get && typeof body === 'string') query.push(body);
  if (query.length > 0) url += `?${query.join('&')}`;
  return {
    url,
    init: { method: method ?? (body !== undefined && !get ? 'POST' : 'GET'), headers, body: get ? undefined : body },
  };
}

/** An answer a page shows, as a matcher: `…` any string, durations and ages any number. */
function shown(value: unknown, key = ''): unknown {
  if (value === '…') return expect.any(String);
  if (typeof value === 'number' && /(durationMs|latencyMs|ageSeconds)$/.test(key)) return expect.any(Number);
  if (Array.isArray(value)) return value.map((item) => shown(item));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, shown(item, name)]));
  return value;
}

/** Checks a command other than curl against the scripts and the settings. */
function checkCommand(command: string): void {
  if (command in RUN_ELSEWHERE) return void expect(read(RUN_ELSEWHERE[command] ?? '')).toBeTruthy();
  const words = shellWords(command);
  const env: Record<string, string> = {};
  while (/^[A-Z_]+=/.test(words[0] ?? '')) {
    const [name = '', ...value] = (words.shift() ?? '').split('=');
    env[name] = value.join('=');
  }
  if (words[0] === 'docker' && words[1] === 'run') {
    words.forEach((word, i) => {
      if (words[i - 1] !== '-e') return;
      const [name = '', ...value] = word.split('=');
      env[name] = value.join('=');
    });
    Object.assign(env, { NODE_ENV: 'production' });
  } else {
    expect(words[0], command).toBe('npm');
    const script = words[1] === 'run' ? words.find((word, i) => i > 1 && !word.startsWith('-')) : words[1];
    expect(['start', 'test', 'ci', ...SCRIPTS], command).toContain(script);
  }
  for (const name of Object.keys(env))
    expect(KNOWN.has(name) || OTHER_VARIABLES.test(name), `${name} in ${command}`).toBe(true);
  const argv = words[1] === 'start' && words[2] === '--' ? words.slice(3) : [];
  expect(() => loadConfig(argv, env), command).not.toThrow();
}

/** The first server-sent event's data of an answer in parts. */
async function firstEvent(answer: Response): Promise<unknown> {
  const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!/\n\n/.test(text.slice(text.indexOf('data:')))) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  await reader.cancel();
  return JSON.parse(/^data: ?(.*)$/m.exec(text)?.[1] ?? 'null');
}

/** An answer an example got: the page may show it next, else it must be a success. */
type Answer = { where: string; status: number; body: unknown };

/** An answer the page does not show: a success (a status below 400, no GraphQL or JSON-RPC error). */
function succeeded({ where, status, body }: Answer): void {
  const { errors, error } = (body ?? {}) as { errors?: unknown; error?: unknown };
  expect({ where, status: status < 400, errors, error }).toEqual({
    where,
    status: true,
    errors: undefined,
    error: undefined,
  });
}

/** Runs one example block (not an answer): the answer it got, if it sent a request. */
async function runBlock(block: Block, where: string, gateway: ObservedGateway): Promise<Answer | undefined> {
  if (block.language === 'graphql') {
    const streamed = /@(live|defer|stream)\b/.test(block.text);
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: streamed ? 'text/event-stream' : 'application/json',
        ...ALL_CREDENTIALS,
      },
      body: JSON.stringify({ query: block.text, variables: block.variables }),
    });
    const body = streamed ? await firstEvent(response) : ((await response.json()) as unknown);
    expect((body as { data?: unknown }).data, where).toBeTruthy();
    return { where, status: response.status, body };
  }
  if (block.language === 'sh') {
    let answer: Answer | undefined;
    for (const command of commands(block.text)) {
      if (answer) succeeded(answer);
      answer = undefined;
      if (!command.startsWith('curl ')) {
        checkCommand(command);
        continue;
      }
      const { url, init } = curlRequest(shellWords(command), gateway.origin);
      const response = await fetch(url, init);
      const text = (await response.text()).replaceAll(gateway.origin, 'http://localhost:4000');
      answer = { where: `${where}: ${command.slice(0, 80)}`, status: response.status, body: JSON.parse(text) };
    }
    return answer;
  }
  if (block.language === 'yaml') parseYaml(block.text);
  else expect(block.language, `${where}: a block needs a language the test knows`).toBe('text');
  return undefined;
}

/** Runs one page's examples in order on a gateway of its own. */
async function runPage(file: string, gateway: ObservedGateway): Promise<void> {
  let answer: Answer | undefined;
  for (const block of blocks(read(file))) {
    const where = `${file}: ${block.text.slice(0, 80)}`;
    if (block.language === 'json') {
      const parsed: unknown = JSON.parse(block.text);
      if (answer && block.next) expect(answer.body, answer.where).toEqual(shown(parsed));
      else if (answer) succeeded(answer);
      answer = undefined;
      continue;
    }
    if (answer) succeeded(answer);
    answer = await runBlock(block, where, gateway);
  }
  if (answer) succeeded(answer);
}

describe.each(USER_PAGES)('the examples of %s', (file) => {
  it('run, and answer what the page shows', async () => {
    const settings = pageSettings(read(file));
    const changed = loadConfig([], settings);
    const defaults = loadConfig([], {});
    const overrides = Object.fromEntries(
      Object.entries(changed).filter(
        ([key, value]) => JSON.stringify(value) !== JSON.stringify(defaults[key as keyof typeof defaults]),
      ),
    ) as Partial<GatewayConfig>;
    const emulator: Emulator = await startEmulator();
    const gateway = await serveObserved(emulator, overrides);
    try {
      await runPage(file, gateway);
    } finally {
      await gateway.close();
      await emulator.close();
    }
  });
});
