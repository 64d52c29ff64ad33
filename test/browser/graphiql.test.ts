/**
 * GraphiQL in a real browser (Debian's headless Chromium, driven by playwright-core): it loads
 * from the gateway alone, opens with the example operations and the demo credentials, and the
 * first query a newcomer runs succeeds; with EXPLAIN on, the response pane lists the upstream
 * calls a query cost. Any request to a host other than this machine fails the test (and is
 * refused): the page must work without internet.
 */
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { captureLog, listen, stop, testConfig } from '../helpers/stack.js';

const SCREENSHOT = 'test-results/graphiql.png';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

let emulator: Emulator;
let gateway: Gateway;
let served: Awaited<ReturnType<typeof listen>>;
let browser: Browser;
/** Requests the page made to any other host. */
const outside: string[] = [];

beforeAll(async () => {
  emulator = await startEmulator();
  gateway = createGateway(
    testConfig({ petstoreUrl: emulator.petstoreUrl, plantsUrl: emulator.plantsUrl, emulator: true }),
    { logDestination: captureLog() },
  );
  served = await listen(gateway.handler);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (served) await stop(served.server);
  await gateway?.close();
  await emulator?.close();
});

/** A page whose every network request is checked: loopback goes through, anything else is recorded and refused. */
async function openPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (
      (url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'ws:' || url.protocol === 'wss:') &&
      !LOOPBACK.has(url.hostname)
    ) {
      outside.push(url.href);
      await route.abort('blockedbyclient');
    } else {
      await route.continue();
    }
  });
  const page = await context.newPage();
  page.on('websocket', (socket) => outside.push(socket.url()));
  return page;
}

/** What an editor shows, as plain text (Monaco draws spaces as no-break spaces). */
async function editorText(page: Page, selector: string): Promise<string> {
  return (await page.locator(`${selector} .view-lines`).first().innerText()).replace(/\u00a0/g, ' ');
}

/** Opens the gateway's GraphiQL in `page` and waits for its first example in the query editor; its run button. */
async function openGraphiQL(page: Page) {
  await page.goto(`${served.url}/graphql`);
  const run = page.locator('.graphiql-execute-button');
  await run.waitFor({ state: 'visible', timeout: 30_000 });
  await expect.poll(() => editorText(page, '.graphiql-query-editor'), { timeout: 15_000 }).toContain('query Pets {');
  return run;
}

it('opens GraphiQL, runs the first example query with the demo credentials, and shows the pets', async () => {
  const page = await openPage();
  emulator.clearRequests();

  const run = await openGraphiQL(page);
  await run.click();

  await expect.poll(() => editorText(page, '.graphiql-response'), { timeout: 15_000 }).toContain('"name": "Cat 1"');
  const response = await editorText(page, '.graphiql-response');
  expect(response).toContain('"petsByStatus"');
  expect(response).not.toContain('"errors"');
  // The query went out with the credentials prefilled in the headers tab.
  const petCall = emulator.requests.find((request) => request.path === '/api/v3/pet/1');
  expect(petCall?.headers['api_key']).toBe('demo');
  expect(
    emulator.requests.find((request) => request.path === '/api/v3/pet/findByStatus')?.headers['authorization'],
  ).toBe('Bearer demo');

  mkdirSync('test-results', { recursive: true });
  await page.screenshot({ path: SCREENSHOT, fullPage: true });
  await page.context().close();

  expect(outside).toEqual([]);
});

it('with EXPLAIN on, shows the upstream calls a query cost in the response pane (extensions.upstream)', async () => {
  const page = await openPage();
  emulator.clearRequests();

  const run = await openGraphiQL(page);
  // A short query, so that the whole answer fits in the pane (the editor draws only the lines in view).
  await page.locator('.graphiql-query-editor .view-lines').first().click();
  await page.keyboard.press('ControlOrMeta+A');
  // Named as the tab's operation was: GraphiQL runs the operation it last saw by that name.
  await page.keyboard.insertText('query Pets { pet(id: "2") { id } }');
  await expect.poll(() => editorText(page, '.graphiql-query-editor')).toBe('query Pets { pet(id: "2") { id } }');
  await run.click();

  await expect.poll(() => editorText(page, '.graphiql-response'), { timeout: 15_000 }).toContain('"upstream"');
  const response = JSON.parse(await editorText(page, '.graphiql-response')) as unknown;
  expect(response).toEqual({
    data: { pet: { id: '2' } },
    extensions: {
      upstream: [
        {
          service: 'petstore',
          operation: 'getPetById',
          method: 'GET',
          path: '/pet/{petId}',
          status: 200,
          durationMs: expect.any(Number) as unknown,
          batched: true,
          shared: false,
          cached: false,
        },
      ],
    },
  });
  // What the pane lists is what the upstream received.
  expect(emulator.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /api/v3/pet/2']);
  await page.context().close();

  expect(outside).toEqual([]);
});

it('would notice a page that reaches for another host (the guard above is live)', async () => {
  const page = await openPage();
  await page.goto(`${served.url}/health`);

  const answer = await page.evaluate(
    "fetch('https://cdn.example.com/graphiql.js').then(() => 'loaded', () => 'refused')",
  );

  expect(answer).toBe('refused');
  expect(outside.splice(0)).toEqual(['https://cdn.example.com/graphiql.js']);
  await page.context().close();
});
