/**
 * GraphiQL as a newcomer first sees it: one tab per area with operations that run as they
 * are (pets, orders, inventory, users, plants, and an upload, which needs a multipart client),
 * and, on the embedded emulator only, demo credentials in the headers tab, so that the first
 * query succeeds. With real upstreams nothing is prefilled: a credential is the user's to give.
 *
 * The operations are `.graphql` files in `schema/examples/`, one per tab, so that they read and
 * diff as GraphQL; a test runs each of them against the schema.
 *
 * The page (yoga's offline GraphiQL, its assets inlined: about 9 MB) is rendered once, compressed
 * once per coding when a browser first asks for it, and sent with an ETag, so that a reload costs
 * a 304 of a few hundred bytes ({@link graphiqlPages}).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';
import { acceptedCoding, changedHeaders, withVary, type ContentCoding } from './compression.js';
import { projectFile } from '../project-files.js';

/** The credentials prefilled on the embedded emulator, which accepts any non-empty credential. */
export const DEMO_HEADERS = { Authorization: 'Bearer demo', api_key: 'demo' };

/** One tab: its operations and, for those that take them, variables to start from. */
export type Tab = { query: string; variables?: string };

/** The tabs in order (the first one runs with the ▶ button as it is): each one's file, and its variables. */
const TABS: readonly { file: string; variables?: Record<string, unknown> }[] = [
  { file: 'pets.graphql' },
  {
    file: 'orders.graphql',
    variables: { input: { petId: '1', quantity: 2, shipDate: '2030-01-01T10:00:00Z', status: 'placed' } },
  },
  { file: 'inventory.graphql' },
  {
    file: 'users.graphql',
    variables: {
      input: { username: 'newcomer', firstName: 'New', email: 'newcomer@example.com', password: 'choose-one' },
    },
  },
  { file: 'plants.graphql' },
  { file: 'upload.graphql' },
];

let tabs: readonly Tab[] | undefined;

/** The example tabs, read from `schema/examples/` when first asked for (only when GraphiQL is on). */
export function exampleTabs(): readonly Tab[] {
  tabs ??= TABS.map(({ file, variables }) => ({
    query: readFileSync(projectFile(`schema/examples/${file}`), 'utf8'),
    ...(variables ? { variables: JSON.stringify(variables, null, 2) } : {}),
  }));
  return tabs;
}

/** The header that asks the gateway for `extensions.upstream` (EXPLAIN; src/plugins/explain.ts). */
const EXPLAIN_HEADERS = { 'x-gateway-explain': '1' };

/**
 * GraphiQL's options: the example tabs, with the demo credentials in each tab's headers when
 * the upstreams are the embedded emulator (and only then), and `x-gateway-explain: 1` when
 * EXPLAIN is on, so that each answer in the response pane lists the upstream calls it cost
 * (`extensions.upstream`); the user can remove it in the headers tab.
 */
export function graphiqlOptions(upstreams: { emulator: boolean; explain?: boolean }): GraphiQLOptions {
  const prefilled = {
    ...(upstreams.emulator ? DEMO_HEADERS : {}),
    ...(upstreams.explain === true ? EXPLAIN_HEADERS : {}),
  };
  const headers = Object.keys(prefilled).length > 0 ? JSON.stringify(prefilled, null, 2) : undefined;
  // The curl command of the upload tab: with the demo token on the emulator, a placeholder otherwise.
  const token = upstreams.emulator ? 'demo' : '<your token>';
  return {
    title: 'Pet store GraphQL gateway',
    defaultTabs: exampleTabs().map((tab) => ({
      query: tab.query.replace('Bearer TOKEN', `Bearer ${token}`),
      variables: tab.variables ?? null,
      headers: headers ?? null,
    })),
    // New tabs get the same headers; with real upstreams, the user types their own credentials.
    ...(headers ? { defaultHeaders: headers } : {}),
    // A user's own credentials are not written to the browser's storage; the demo ones may be.
    shouldPersistHeaders: upstreams.emulator,
  };
}

/**
 * How the page is compressed, once per coding: at a moderate level, since it is done once per
 * page and off the event loop (zlib's thread pool), but the first browser waits for it. On the
 * 9,053,750-byte page: brotli quality 5 makes 1,946,330 bytes in 0.24 s (quality 9: 1.86 MB in
 * 0.85 s; 11: 1.71 MB in 18 s); gzip level 6 makes 2,440,980 bytes in 0.2 s (level 9 saves 10 KB
 * more in twice the time).
 */
const PAGE_CODERS: Record<ContentCoding, (html: string) => Promise<Uint8Array<ArrayBuffer>>> = {
  br: (html) =>
    promisify(brotliCompress)(html, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 5,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(html),
      },
    }),
  gzip: (html) => promisify(gzip)(html, { level: 6 }),
};

/**
 * `no-cache`: a browser keeps the page but asks each load whether it is still current, and gets a
 * 304 with no body while it is. Not a max-age: the page is served at the endpoint's own URL, which
 * carries no version, and its content changes with the gateway's version and its upstreams (demo
 * credentials on the emulator only), so a kept copy must not outlive a restart unasked. Not
 * `private`: the page holds nothing of a user's.
 */
const PAGE_CACHE_CONTROL = 'no-cache';

/** One rendered page: its HTML, its validator, and its compressed forms, each made when first asked for. */
class GraphiQLPage {
  /** bytes of the HTML as it is */
  readonly length: number;
  /** a digest of the HTML: the ETag of each form is this and its coding */
  private readonly digest: string;
  private readonly coded = new Map<ContentCoding, Promise<Uint8Array<ArrayBuffer> | undefined>>();

  constructor(readonly html: string) {
    this.length = Buffer.byteLength(html);
    this.digest = createHash('sha256').update(html).digest('base64url').slice(0, 22);
  }

  /** The ETag of the page in `coding` (or as it is): a strong validator, so one per form (RFC 9110 §8.8.3.3). */
  etag(coding: ContentCoding | undefined): string {
    return `"${this.digest}${coding === undefined ? '' : `-${coding}`}"`;
  }

  /** The page in `coding`, compressed once; undefined if that failed (the page is then sent as it is). */
  encoded(coding: ContentCoding): Promise<Uint8Array<ArrayBuffer> | undefined> {
    let encoded = this.coded.get(coding);
    if (encoded === undefined) {
      encoded = PAGE_CODERS[coding](this.html).catch(() => undefined);
      this.coded.set(coding, encoded);
    }
    return encoded;
  }
}

/** Whether an If-None-Match header names `etag` (weak comparison, as RFC 9110 §13.1.2 asks) or is `*`. */
function namesTag(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag;
  });
}

/** GraphiQL's page for yoga: its options, its renderer, and the plugin that sends it compressed and cacheable. */
export type GraphiQLPages = {
  /** yoga's `graphiql` option: `options`, with each request it is served to noted for the plugin */
  options: (options: GraphiQLOptions) => (request: Request) => GraphiQLOptions;
  /** yoga's `renderGraphiQL`: the page of these options, rendered once */
  render: (options: GraphiQLOptions) => Promise<string>;
  /**
   * Sends the page yoga answered with in the coding the browser asks for (br, else gzip, else as
   * it is), with its ETag, `Cache-Control` and `Vary`, or a 304 when the browser's copy is current.
   */
  plugin: Plugin;
};

/**
 * GraphiQL's page, made once per variant (the options decide it: the demo credentials differ
 * between the emulator and real upstreams). yoga still decides when the page is asked for; its
 * answer is then replaced by the page's stored bytes, so a load costs no rendering and no
 * compression.
 * @param render renders the page of some options (yoga's offline GraphiQL, loaded when first needed)
 */
export function graphiqlPages(render: (options: GraphiQLOptions) => string | Promise<string>): GraphiQLPages {
  const pages = new Map<string, Promise<GraphiQLPage>>();
  const servedTo = new WeakMap<Request, GraphiQLOptions>();
  const page = (options: GraphiQLOptions): Promise<GraphiQLPage> => {
    // yoga hands the renderer a copy of the options: they are told apart by their content.
    const key = JSON.stringify(options);
    let rendered = pages.get(key);
    if (rendered === undefined) {
      rendered = Promise.resolve(render(options)).then((html) => new GraphiQLPage(html));
      // A render that failed (its module could not be loaded) is tried again on the next load.
      rendered.catch(() => pages.delete(key));
      pages.set(key, rendered);
    }
    return rendered;
  };
  return {
    options: (options) => (request) => {
      servedTo.set(request, options);
      return options;
    },
    render: async (options) => (await page(options)).html,
    plugin: {
      async onResponse(payload) {
        const { request, response, fetchAPI } = payload;
        const options = servedTo.get(request);
        if (options === undefined || response.status !== 200) return;
        const current = await page(options);
        const wanted = acceptedCoding(request.headers.get('accept-encoding'));
        const encoded = wanted === undefined ? undefined : await current.encoded(wanted);
        const coding = encoded === undefined ? undefined : wanted;
        const etag = current.etag(coding);
        const validators = {
          etag,
          'cache-control': PAGE_CACHE_CONTROL,
          // The endpoint's URL answers JSON to other Accept headers: a cache keys the page by both.
          vary: withVary(response.headers.get('vary') ?? undefined, 'Accept', 'Accept-Encoding'),
        };
        if (namesTag(request.headers.get('if-none-match'), etag)) {
          const headers = changedHeaders(response.headers, {
            ...validators,
            'content-type': undefined,
            'content-length': undefined,
          });
          return payload.setResponse(new fetchAPI.Response(null, { status: 304, headers }));
        }
        const headers = changedHeaders(response.headers, {
          ...validators,
          'content-type': 'text/html; charset=utf-8',
          'content-length': String(encoded?.byteLength ?? current.length),
          'content-encoding': coding,
        });
        payload.setResponse(new fetchAPI.Response(encoded ?? current.html, { status: 200, headers }));
      },
    },
  };
}
