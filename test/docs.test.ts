/**
 * The docs say what the gateway does: the settings, error codes and metrics references are what
 * the code generates; the user pages stay short, are each linked from the index, and name only
 * settings, codes, metrics, scripts, files and headings that exist; each status the security page
 * gives a refusal is the status a request of that kind gets, under both media types the page
 * distinguishes; figures name the benchmark run they come from. test/docs-examples.test.ts runs
 * the pages' examples.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { accepts, declaredMetrics, documentedCodes, GENERATED_PAGES, generatedPages } from '../scripts/config-docs.js';
import { EMULATOR_SETTINGS, SETTINGS } from '../src/config/index.js';
import type { GatewayConfig } from '../src/gateway.js';
import { USER_PAGES } from './helpers/docs.js';
import { errorCodeUnion } from './helpers/error-codes.js';
import { useObserved } from './helpers/observed.js';
import { PROJECT_ROOT } from './helpers/process.js';

const read = (file: string) => readFileSync(`${PROJECT_ROOT}${file}`, 'utf8');

describe('the generated references (npm run docs writes them)', () => {
  it.each(Object.values(GENERATED_PAGES))('%s is what the code generates', async (page) => {
    expect(read(page)).toBe((await generatedPages())[page]);
  });

  it.each(SETTINGS.map((setting) => ({ env: setting.env, setting })))(
    '$env: a number says the values it accepts, 0 says what it means, unset says what it means',
    ({ setting }) => {
      const meaning: string = setting.details;
      const range = accepts(setting);
      if (setting.default !== undefined && /^\d+(\.\d+)?$/.test(setting.default)) expect(range).toMatch(/\d–\d/);
      if (range?.startsWith('0–')) expect(meaning).toMatch(/`0`|\b0 \(|\b0 picks/);
      if (setting.default === undefined) expect(meaning).toMatch(/\bunset\b/);
    },
  );

  it('has every code of ErrorCode, each saying when it is sent and what to do', () => {
    const codes = documentedCodes();
    expect(codes.map(({ code }) => code).sort()).toEqual(errorCodeUnion());
    for (const { code, when, whatToDo } of codes)
      expect({ code, when: when.length > 10, whatToDo: whatToDo.length > 10 }).toEqual({
        code,
        when: true,
        whatToDo: true,
      });
  });
});

describe('the user pages', () => {
  const words = (file: string) => read(file).split(/\s+/).filter(Boolean).length;

  it('are short: at most 2,500 words each and 15,000 together', () => {
    const counts = Object.fromEntries(USER_PAGES.map((file) => [file, words(file)]));
    expect(Object.entries(counts).filter(([, count]) => count > 2500)).toEqual([]);
    expect(Object.values(counts).reduce((sum, count) => sum + count, 0)).toBeLessThanOrEqual(15_000);
  });

  it('are each linked from docs/README.md, which the README links', () => {
    const index = read('docs/README.md');
    for (const file of USER_PAGES.filter((page) => page.startsWith('docs/') && page !== 'docs/README.md'))
      expect(index, file).toContain(`](${file.slice('docs/'.length)})`);
    expect(read('README.md')).toContain('](docs/README.md)');
  });

  it.each([...USER_PAGES, 'CHANGELOG.md'])(
    '%s names only settings, codes, metrics and scripts that exist',
    async (file) => {
      const page = read(file);
      const metrics = new Set((await declaredMetrics()).map(({ name }) => name));
      const known = new Set<string>([
        ...[...SETTINGS, ...EMULATOR_SETTINGS].map((setting): string => setting.env),
        ...errorCodeUnion(),
        ...exampleVariables(),
      ]);
      const retired = file === 'CHANGELOG.md' ? /^(UPSTREAM_CIRCUIT_FAILURES|REQUEST_ENTITY_TOO_LARGE)$/ : /^$/;
      const names = [...page.matchAll(/`([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b/g)].map((match) => match[1] ?? '');
      expect(
        names.filter(
          (name) => !known.has(name) && !/^(NODE_ENV|NODE_OPTIONS|OTEL_[A-Z_]+)$/.test(name) && !retired.test(name),
        ),
      ).toEqual([]);
      const named = [
        ...page.matchAll(/`((?:graphql|upstream|redis|live|mcp)_[a-z_]+?(?:_total|_seconds|_state|_open))\b/g),
      ];
      expect(named.map((match) => match[1] ?? '').filter((name) => !metrics.has(name))).toEqual([]);
      const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
      const run = [...page.matchAll(/npm run (?:--silent )?([\w:-]+)/g)].map((match) => match[1] ?? '');
      expect(run.filter((script) => !scripts.includes(script))).toEqual([]);
    },
  );

  it.each([...USER_PAGES, 'CHANGELOG.md', ...contributorPages()])(
    '%s links only to files and headings that exist',
    (file) => {
      const broken: string[] = [];
      for (const [, target = ''] of read(file).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:)/.test(target)) continue;
        const [path = '', anchor] = target.split('#');
        const resolved = path === '' ? file : join(dirname(file), path);
        if (!existsSync(`${PROJECT_ROOT}${resolved}`)) broken.push(target);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(read(resolved)).has(anchor))
          broken.push(target);
      }
      expect(broken).toEqual([]);
    },
  );
});

/** The anchors of a page: its headings' slugs, and its `<a id>`s. */
function anchors(page: string): Set<string> {
  const headings = [...page.matchAll(/^#+ (.+)$/gm)].map((match) => slug(match[1] ?? ''));
  const ids = [...page.matchAll(/<a id="([^"]+)"/g)].map((match) => match[1] ?? '');
  return new Set([...headings, ...ids]);
}

/** docs/contributing/'s pages. */
function contributorPages(): string[] {
  return readdirSync(`${PROJECT_ROOT}docs/contributing`).map((name) => `docs/contributing/${name}`);
}

/** A refusal the security page documents: how to provoke it, and on which gateway. */
type Provoked = { overrides?: Partial<GatewayConfig>; send(url: string, accept: string): Promise<Response> };

const PLAIN = { 'content-type': 'application/json' };
const post = (url: string, accept: string, body: string, headers: Record<string, string> = PLAIN) =>
  fetch(url, { method: 'POST', headers: { accept, ...headers }, body });
const postQuery = (url: string, accept: string, query: string) => post(url, accept, JSON.stringify({ query }));
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
const manifest = join(mkdtempSync(join(tmpdir(), 'docs-')), 'manifest.json');
writeFileSync(manifest, JSON.stringify({ [sha256('{ __typename }')]: '{ __typename }' }));

/** One way to provoke each documented refusal. */
const PROVOKED: Record<string, Provoked> = {
  PAYLOAD_TOO_LARGE: {
    overrides: { requestMaxBytes: 100 },
    send: (url, accept) => postQuery(url, accept, `{ __typename ${' '.repeat(200)}}`),
  },
  BAD_REQUEST: { send: (url, accept) => post(url, accept, '{ not json') },
  UNSUPPORTED_MEDIA_TYPE: {
    send: (url, accept) => post(url, accept, '{ __typename }', { 'content-type': 'text/plain', 'x-graphql-csrf': '1' }),
  },
  QUERY_TOO_DEEP: {
    send: (url, accept) =>
      postQuery(url, accept, `{ pet(id: 1) { ${'... on Pet { '.repeat(10)}id${' }'.repeat(10)} } }`),
  },
  TOO_MANY_ALIASES: {
    send: (url, accept) =>
      postQuery(url, accept, `{ ${Array.from({ length: 51 }, (_, i) => `a${i}: pet(id: 1) { id }`).join(' ')} }`),
  },
  TOO_MANY_TOKENS: { send: (url, accept) => postQuery(url, accept, `{ ${'__typename '.repeat(2001)}}`) },
  INPUT_TOO_DEEP: {
    send: (url, accept) =>
      post(url, accept, `{"query":"{ __typename }","variables":{"v":${'['.repeat(101)}${']'.repeat(101)}}}`),
  },
  TOO_MANY_DIRECTIVES: {
    send: (url, accept) => postQuery(url, accept, `{ __typename ${'@include(if: true) '.repeat(21)}}`),
  },
  QUERY_TOO_COSTLY: {
    send: (url, accept) =>
      postQuery(
        url,
        accept,
        `{ ${Array.from({ length: 45 }, (_, i) => `p${i}: pet(id: ${i}) { id name status category { id name } tags { id name } photoUrls }`).join(' ')} }`,
      ),
  },
  RATE_LIMITED: {
    overrides: { rateLimitPerMinute: 1 },
    send: async (url, accept) => {
      await postQuery(url, accept, '{ __typename }');
      return postQuery(url, accept, '{ __typename }');
    },
  },
  COST_ESTIMATED_TOO_EXPENSIVE: {
    overrides: { upstreamMaxCallsPerOperation: 2 },
    send: (url, accept) => postQuery(url, accept, '{ pets(ids: ["1", "2", "3"]) { name } }'),
  },
  COST_RATE_LIMITED: {
    overrides: { rateLimitCostPerMinute: 3 },
    send: async (url, accept) => {
      await postQuery(url, accept, '{ pets(ids: ["1", "2"]) { name } }');
      return postQuery(url, accept, '{ pets(ids: ["1", "2"]) { name } }');
    },
  },
  CSRF_HEADER_REQUIRED: {
    send: (url, accept) => fetch(`${url}?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept } }),
  },
  INTROSPECTION_DISABLED: {
    overrides: { introspection: false },
    send: (url, accept) => postQuery(url, accept, '{ __schema { queryType { name } } }'),
  },
  GRAPHIQL_DISABLED: {
    overrides: { graphiql: false },
    send: (url) => fetch(url, { headers: { accept: 'text/html' } }),
  },
  PERSISTED_QUERY_NOT_FOUND: {
    send: (url, accept) =>
      post(url, accept, JSON.stringify({ extensions: persisted(sha256('{ pet(id: 7) { id } }')) })),
  },
  PERSISTED_QUERY_MISMATCH: {
    send: (url, accept) =>
      post(url, accept, JSON.stringify({ query: '{ __typename }', extensions: persisted(sha256('other')) })),
  },
  PERSISTED_QUERY_NOT_SUPPORTED: {
    overrides: { apq: false },
    send: (url, accept) => post(url, accept, JSON.stringify({ extensions: persisted(sha256('{ __typename }')) })),
  },
  TRUSTED_DOCUMENT_REQUIRED: {
    overrides: { trustedDocuments: manifest, graphiql: false },
    send: (url, accept) => postQuery(url, accept, '{ __typename }'),
  },
  TRUSTED_DOCUMENT_NOT_FOUND: {
    overrides: { trustedDocuments: manifest, graphiql: false },
    send: (url, accept) => post(url, accept, JSON.stringify({ extensions: persisted(sha256('unknown')) })),
  },
};

/** Refusals whose set-up needs a server this file does not start: where each is checked instead. */
const CHECKED_ELSEWHERE: Record<string, string> = {
  RATE_LIMIT_UNAVAILABLE: 'test/redis-faults.test.ts',
  INTERNAL_SERVER_ERROR: 'test/lifecycle-masking.test.ts',
};

/** `status code` pairs of the security page's table ("413 `PAYLOAD_TOO_LARGE`"), each code's first. */
function documentedStatuses(): Map<string, number> {
  const page = read('docs/security.md');
  const table = page.slice(page.indexOf('| Protection'), page.indexOf('\n\n', page.indexOf('| Protection')));
  const statuses = new Map<string, number>();
  for (const [, status, code] of table.matchAll(/\b([1-5]\d\d) `([A-Z_]+)`/g))
    if (code && !statuses.has(code)) statuses.set(code, Number(status));
  return statuses;
}

/** The codes the page says are answered 200 under `application/json` (its "Statuses and Accept" paragraph). */
function okUnderJson(): Set<string> {
  const page = read('docs/security.md');
  const start = page.indexOf('**Statuses and `Accept`.**');
  const paragraph = page.slice(start, page.indexOf('\n\n', start));
  return new Set([...paragraph.matchAll(/`([A-Z][A-Z_]+)`/g)].map((match) => match[1] ?? ''));
}

describe('docs/security.md', () => {
  const observed = useObserved();
  const statuses = documentedStatuses();

  it('documents a status for every refusal it lists, and each has a request here (or a test named)', () => {
    expect(statuses.size).toBeGreaterThan(15);
    for (const code of statuses.keys())
      expect({ code, provoked: code in PROVOKED || code in CHECKED_ELSEWHERE }).toEqual({ code, provoked: true });
    for (const [code, file] of Object.entries(CHECKED_ELSEWHERE)) expect(read(file)).toContain(code);
  });

  it.each(Object.keys(PROVOKED))('%s: the documented request gets the documented status and code', async (code) => {
    const provoked = PROVOKED[code] as Provoked;
    const documented = statuses.get(code);
    expect(documented, `docs/security.md gives ${code} no status`).toBeDefined();
    for (const accept of ['application/graphql-response+json', 'application/json']) {
      const gateway = await observed.serve(undefined, { ...provoked.overrides });
      const answer = await provoked.send(gateway.url, accept);
      const expected = accept === 'application/json' && okUnderJson().has(code) ? 200 : documented;
      expect({ accept, status: answer.status }).toEqual({ accept, status: expected });
      expect(await answer.text()).toContain(`"code":"${code}"`);
    }
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

/** bench/RESULTS.md's sections by anchor: each `## ` heading's text to the next. */
function resultsSections(): Map<string, string> {
  const sections = new Map<string, string>();
  for (const part of read('bench/RESULTS.md').split(/^## /m).slice(1))
    sections.set(slug(part.slice(0, part.indexOf('\n'))), part.replace(/(\d),(\d{3})/g, '$1$2'));
  return sections;
}

/** A measured figure: CPU, memory, throughput or a ratio between two runs. */
const MEASURED = /\d(\.\d+)? ?(ms of CPU|ms CPU|ms\/req|MB\b|req\/s|answers a second|requests a second)|\d×/;
/** Each number a paragraph quotes with a unit (ranges give both ends). */
const QUOTED =
  /(\d[\d,]*(?:\.\d+)?)(?:[–-](\d[\d,]*(?:\.\d+)?))? ?(?:ms|µs|MB|s|req\/s|×|%|answers a second|requests a second)(?![\w/])/g;

describe('figures', () => {
  const sections = resultsSections();

  it('bench/RESULTS.md has the sections user pages quote', () => {
    expect([...sections.keys()]).toEqual(
      expect.arrayContaining(['throughput-and-latency', 'start-to-first-answer-and-idle-memory']),
    );
  });

  it.each(USER_PAGES)('%s: each measured figure is one of the bench/RESULTS.md section it links to', (file) => {
    for (const paragraph of read(file).split(/\n\s*\n/)) {
      const linked = [...paragraph.matchAll(/RESULTS\.md#([\w-]+)/g)].map((match) => match[1] ?? '');
      if (!MEASURED.test(paragraph) && linked.length === 0) continue;
      const where = `${file}: ${paragraph.slice(0, 100)}…`;
      expect(linked.length, `${where} names no section of bench/RESULTS.md`).toBeGreaterThan(0);
      const quoted = linked.map((anchor) => {
        expect(sections.has(anchor), `${where}: bench/RESULTS.md has no section #${anchor}`).toBe(true);
        return sections.get(anchor) ?? '';
      });
      const text = paragraph.replace(/\]\([^)]*\)/g, ']').replace(/(\d),(\d{3})/g, '$1$2');
      for (const [, ...numbers] of text.matchAll(QUOTED))
        for (const number of numbers.filter((found) => found !== undefined)) {
          const standalone = new RegExp(`(?<![\\d.])${number.replace(/,/g, '').replace('.', '\\.')}(?!\\d|\\.\\d)`);
          expect(
            quoted.some((section) => standalone.test(section)),
            `${where} quotes ${number}, not in bench/RESULTS.md#${linked.join(', #')}`,
          ).toBe(true);
        }
    }
  });

  const decisions = readdirSync(`${PROJECT_ROOT}docs/decisions`).map((name) => `docs/decisions/${name}`);

  it.each([...USER_PAGES, ...decisions, 'CHANGELOG.md'])('%s names no commit and no issue', (file) => {
    const page = read(file);
    expect(page.match(/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b/g)).toBeNull();
    expect(page.match(/\bissues? \d+|(?<![\w&])#\d+\b/gi)).toBeNull();
  });
});

describe('CHANGELOG.md', () => {
  const changelog = read('CHANGELOG.md');
  const releases = [...changelog.matchAll(/^## (.+)$/gm)].map((match) => match[1] ?? '');

  it('has one Unreleased section, on top, then released versions, the newest the version of package.json', () => {
    const { version } = JSON.parse(read('package.json')) as { version: string };
    expect(releases[0]).toBe('Unreleased');
    expect(releases.filter((heading) => heading === 'Unreleased')).toHaveLength(1);
    expect(releases[1]).toMatch(new RegExp(`^\\[${version.replace(/\./g, '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}$`));
    for (const heading of releases.slice(1)) expect(heading).toMatch(/^\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}$/);
  });

  it('puts Breaking first in each section that has it', () => {
    for (const section of changelog.split(/^## /m).slice(1)) {
      const parts = [...section.matchAll(/^### (.+)$/gm)].map((match) => match[1] ?? '');
      if (parts.includes('Breaking'))
        expect({ section: section.slice(0, 30), first: parts[0] }).toMatchObject({ first: 'Breaking' });
    }
  });
});

describe('the upload example of docs/graph.md', () => {
  const observed = useObserved();

  it('sends the image the project ships, and the pet store receives it whole', async () => {
    const page = read('docs/graph.md');
    const example = /-F operations='([^']+)'\s*\\\s*\n\s*-F map='([^']+)' -F 0=@(\S+)/.exec(page);
    expect(example, 'the upload example of docs/graph.md').not.toBeNull();
    const [, operations = '', map = '', file = ''] = example ?? [];
    const image = readFileSync(`${PROJECT_ROOT}${file}`);
    const gateway = await observed.serve();
    const form = new FormData();
    form.set('operations', operations);
    form.set('map', map);
    form.set('0', new Blob([image]), 'pet.png');

    const answer = await fetch(gateway.url, {
      method: 'POST',
      headers: { authorization: 'Bearer demo', 'x-graphql-csrf': '1' },
      body: form,
    });

    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ data: { uploadPetImage: { code: 200 } } });
    const upload = observed.emulator.requests.find((request) => request.path === '/api/v3/pet/1/uploadImage');
    expect(upload?.method).toBe('POST');
    expect(upload?.headers['authorization']).toBe('Bearer demo');
    expect(upload?.contentType).toBe('application/octet-stream');
    expect(upload?.rawBody.equals(image)).toBe(true);
    expect(image.subarray(0, 8)).toEqual(Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'));
  });
});

/** The variables the example app's runner and build read (`process.env.NAME`): a page about the example may name them. */
function exampleVariables(): string[] {
  const sources = read('scripts/example.js') + read('examples/app/build.js');
  return [...sources.matchAll(/process\.env(?:\.|\[')([A-Z][A-Z0-9_]+)/g)].map((match) => match[1] ?? '');
}
