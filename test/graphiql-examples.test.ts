/**
 * What GraphiQL opens with: a tab per area whose operations run as they are on the embedded
 * emulator, with the demo credentials in the headers tab there, and none with real upstreams.
 * (test/browser/graphiql.test.ts runs the first tab in a real browser.)
 */
import { Kind, parse, validate, type OperationDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../src/emulator/server.js';
import type { GatewayConfig } from '../src/gateway.js';
import { DEMO_HEADERS, exampleTabs } from '../src/plugins/graphiql.js';
import { createSchema } from '../src/schema.js';
import { multipartBody, postMultipart, uploadParts } from './helpers/multipart.js';
import { GRAPHQL_POST_HEADERS, serveObserved } from './helpers/stack.js';

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(() => emulator.close());

async function page(overrides: Partial<GatewayConfig>): Promise<string> {
  const gateway = await serveObserved(emulator, overrides);
  try {
    return await (await fetch(gateway.url, { headers: { accept: 'text/html' } })).text();
  } finally {
    await gateway.close();
  }
}

/** Every operation of every tab, with the tab's variables. */
const OPERATIONS = exampleTabs().flatMap((tab) =>
  parse(tab.query)
    .definitions.filter(
      (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
    )
    .map((definition) => ({
      name: definition.name?.value ?? '',
      query: tab.query,
      variables: tab.variables ? (JSON.parse(tab.variables) as Record<string, unknown>) : {},
    })),
);

describe('the example tabs', () => {
  it('cover every area: pets, orders, inventory, users, plants and an upload', () => {
    expect(OPERATIONS.map((operation) => operation.name)).toEqual([
      'Pets',
      'Order',
      'PlaceOrder',
      'Inventory',
      'User',
      'CreateUser',
      'CreatePlant',
      'Upload',
    ]);
  });

  it('are valid against the schema', () => {
    const schema = createSchema();
    for (const tab of exampleTabs()) expect(validate(schema, parse(tab.query))).toEqual([]);
  });

  it.each(OPERATIONS.filter((operation) => operation.name !== 'Upload'))(
    '$name runs as it is on the emulator with the demo credentials',
    async ({ name, query, variables }) => {
      const gateway = await serveObserved(emulator, { emulator: true });
      try {
        // As GraphiQL sends it: the whole document, and the operation picked with the ▶ button.
        const response = await fetch(gateway.url, {
          method: 'POST',
          headers: { ...GRAPHQL_POST_HEADERS, ...DEMO_HEADERS },
          body: JSON.stringify({ query, variables, operationName: name }),
        });
        const result = (await response.json()) as { data?: unknown; errors?: unknown };
        expect(result.errors).toBeUndefined();
        expect(response.status).toBe(200);
      } finally {
        await gateway.close();
      }
    },
  );

  it.each(OPERATIONS.filter((operation) => operation.name !== 'Upload'))(
    '$name makes no more upstream calls than the gateway estimated before it ran',
    async ({ name, query, variables }) => {
      const gateway = await serveObserved(emulator, { emulator: true });
      try {
        const response = await fetch(gateway.url, {
          method: 'POST',
          headers: { ...GRAPHQL_POST_HEADERS, ...DEMO_HEADERS, 'x-gateway-cost': '1' },
          body: JSON.stringify({ query, variables, operationName: name }),
        });
        const result = (await response.json()) as { extensions?: { cost?: Record<string, number> } };
        const cost = result.extensions?.cost ?? {};
        expect(cost['actualQueryCost']).toBeGreaterThan(0);
        expect(cost['requestedQueryCost']).toBeGreaterThanOrEqual(cost['actualQueryCost'] ?? Infinity);
      } finally {
        await gateway.close();
      }
    },
  );

  /** The Upload tab's operation sent as its curl command sends it (multipart, the CSRF header, the demo bearer). */
  const postUpload = (url: string, headers: Record<string, string> = {}) => {
    const upload = OPERATIONS.find((operation) => operation.name === 'Upload');
    const body = multipartBody(
      uploadParts(
        { query: upload?.query ?? '', variables: {} },
        { filename: 'photo.jpg', contentType: 'image/jpeg', content: Buffer.from('jpeg bytes') },
      ),
    );
    return postMultipart(url, body, {
      headers: { authorization: DEMO_HEADERS.Authorization, 'x-graphql-csrf': '1', ...headers },
    });
  };

  it('Upload makes no more upstream calls than the gateway estimated before it ran', async () => {
    const gateway = await serveObserved(emulator, { emulator: true });
    try {
      const result = await postUpload(gateway.url, { 'x-gateway-cost': '1' });
      expect(result.extensions?.['cost']).toEqual({ requestedQueryCost: 1, actualQueryCost: 1 });
    } finally {
      await gateway.close();
    }
  });

  it('Upload runs as the curl command in its tab sends it (multipart, with the CSRF header)', async () => {
    const gateway = await serveObserved(emulator, { emulator: true });
    try {
      const result = await postUpload(gateway.url);
      expect(result.errors).toBeUndefined();
      expect(result.data).toMatchObject({ uploadPetImage: { code: 200 } });
    } finally {
      await gateway.close();
    }
  });
});

/** The options the page hands to GraphiQL (the JSON it is rendered with). */
function optionsOf(html: string): {
  defaultTabs: { query: string; headers: string | null }[];
  defaultHeaders?: string;
  shouldPersistHeaders?: boolean;
} {
  const match = /renderYogaGraphiQL\(\s*window\.document\.querySelector\('#root'\),\s*(\{.*\}),\s*\);/s.exec(html);
  if (!match?.[1]) throw new Error('no GraphiQL options in the page');
  return JSON.parse(match[1]) as ReturnType<typeof optionsOf>;
}

describe('the page', () => {
  it('on the embedded emulator, opens with the example tabs and the demo credentials in the headers tab', async () => {
    const options = optionsOf(await page({ emulator: true, explain: false }));

    const demo = JSON.stringify(DEMO_HEADERS, null, 2);
    expect(options.defaultTabs.map((tab) => tab.query.match(/^(query|mutation) \w+/m)?.[0])).toEqual([
      'query Pets',
      'query Order',
      'query Inventory',
      'query User',
      'mutation CreatePlant',
      'mutation Upload',
    ]);
    expect(options.defaultTabs.every((tab) => tab.headers === demo)).toBe(true);
    expect(options).toMatchObject({ defaultHeaders: demo, shouldPersistHeaders: true });
    expect(options.defaultTabs[5]?.query).toContain("-H 'Authorization: Bearer demo' -H 'x-graphql-csrf: 1'");
  });

  it('with real upstreams, opens with the example tabs and no credentials at all', async () => {
    const html = await page({ emulator: false, explain: false });
    const options = optionsOf(html);

    expect(options.defaultTabs).toHaveLength(exampleTabs().length);
    expect(options.defaultTabs.every((tab) => tab.headers === null)).toBe(true);
    expect(options.defaultHeaders).toBeUndefined();
    expect(options.shouldPersistHeaders).toBe(false);
    expect(options.defaultTabs[5]?.query).toContain("-H 'Authorization: Bearer <your token>'");
    expect(html).not.toContain('Bearer demo');
  });

  it('with EXPLAIN on, sends x-gateway-explain: 1 from every tab, beside the demo credentials on the emulator', async () => {
    const onEmulator = optionsOf(await page({ emulator: true, explain: true }));
    const onReal = optionsOf(await page({ emulator: false, explain: true }));

    const demo = JSON.stringify({ ...DEMO_HEADERS, 'x-gateway-explain': '1' }, null, 2);
    expect(onEmulator.defaultTabs.every((tab) => tab.headers === demo)).toBe(true);
    expect(onEmulator.defaultHeaders).toBe(demo);
    // With real upstreams, the explain header and nothing else: no credential is prefilled.
    const explainOnly = JSON.stringify({ 'x-gateway-explain': '1' }, null, 2);
    expect(onReal.defaultTabs.every((tab) => tab.headers === explainOnly)).toBe(true);
    expect(onReal).toMatchObject({ defaultHeaders: explainOnly, shouldPersistHeaders: false });
  });
});
