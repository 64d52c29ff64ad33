/**
 * The front's table of plugins (src/http/plugin-table.ts): which requests the lane may serve is
 * read at start from the plugins yoga runs and its options. Whatever the table does not cover (a
 * plugin without a row, a request hook its row does not name, a plugin of yoga's it does not
 * expect, an option the lane does not serve) keeps every request on yoga, and says why.
 */
import { buildSchema } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { maskError } from '../src/errors.js';
import { pluginsOf, readPluginTable, type YogaOptions } from '../src/http/plugin-table.js';
import type { NamedPlugin } from '../src/plugins/named.js';

const schema = buildSchema('type Query { hello: String }');

/** The table read for `plugins` given to a yoga built with the gateway's options, changed by `options`. */
function tableFor(plugins: NamedPlugin[], options: Partial<YogaOptions> = {}) {
  const given: YogaOptions = {
    schema,
    maskedErrors: { maskError },
    parserAndValidationCache: { validationCache: false },
    cors: false,
    graphiql: false,
    batching: false,
    maxRequestBodySize: false,
    multipart: false,
    landingPage: false,
    plugins: plugins.map(({ plugin }) => plugin),
    ...options,
  };
  return readPluginTable(plugins, given, pluginsOf(createYoga(given)));
}

const noop = () => undefined;

describe("the front's table of plugins", () => {
  it('lets the lane serve when every request hook of every plugin has its row, envelop hooks needing none', () => {
    const table = tableFor([
      { name: 'graphql-context', plugin: { onEnveloped: noop } },
      { name: 'input-depth', plugin: { onParams: noop, onParse: noop } },
      { name: 'secret-redaction', plugin: { onResultProcess: noop } },
    ]);

    expect(table.yogaOnly).toEqual([]);
  });

  it('keeps every request on yoga for a plugin without a row, and for a request hook its row does not name', () => {
    const table = tableFor([
      { name: 'a plugin added tomorrow', plugin: { onExecute: noop } },
      { name: 'explain', plugin: { onResultProcess: noop, onResponse: noop } },
    ]);

    expect(table.yogaOnly).toEqual([
      "plugin a plugin added tomorrow: no row in the front's table",
      'plugin explain onResponse',
    ]);
  });

  it('calls the hooks whose row says the lane calls them, in the order of the plugins', () => {
    const [observerParams, observerResult, cacheLookup] = [noop.bind(1), noop.bind(2), noop.bind(3)];
    const table = tableFor([
      { name: 'observability', plugin: { onResultProcess: observerResult, onParams: observerParams } },
      { name: 'input-depth', plugin: { onParams: noop } },
      { name: 'response-cache', plugin: { onParams: cacheLookup } },
    ]);

    expect(table.paramsHooks).toEqual([observerParams, cacheLookup]);
    expect(table.resultHooks).toEqual([observerResult]);
  });

  it("keeps every request on yoga for an option of yoga's the lane does not serve", () => {
    const table = tableFor([], {
      maxRequestBodySize: 1000,
      cors: () => ({ origin: ['https://app.example'] }),
      allowedHeaders: { response: ['content-type'] },
    });

    expect(table.yogaOnly).toEqual(
      expect.arrayContaining(['option maxRequestBodySize', 'option cors', 'option allowedHeaders']),
    );
  });

  it("serves with yoga's own plugins as the options install them: CORS, GraphiQL, multipart uploads", () => {
    const table = tableFor([], { cors: { origin: ['https://app.example'] }, graphiql: true, multipart: true });

    expect(table.yogaOnly).toEqual([]);
  });

  it('keeps every request on yoga for a plugin yoga runs that the table does not know: one a plugin adds as it starts', () => {
    const adds: Plugin = { onPluginInit: ({ addPlugin }) => addPlugin({ onRequest: noop }) };
    const table = tableFor([{ name: 'graphql-context', plugin: adds }]);

    expect(table.yogaOnly).toEqual([expect.stringMatching(/^a plugin of yoga's with onRequest/)]);
  });

  it('derives what the lane checks from the plugins installed: the CSRF header on a GET', () => {
    expect(tableFor([{ name: 'csrf-prevention', plugin: { onRequestParse: noop } }]).csrfPrevention).toBe(true);
    expect(tableFor([]).csrfPrevention).toBe(false);
  });
});
