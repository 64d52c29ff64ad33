/**
 * The example app (`npm run example`: examples/app/ on a gateway that runs only its manifest),
 * driven in Debian's headless Chromium as a person uses it: the list shows the emulator's pets,
 * an order placed shows in the inventory, a missing credential shows its sentence, and the
 * gateway started by the example refuses a document that is not in the app's manifest. Every
 * request the app makes names a document by its key; none goes to another host.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { seedPets } from '../../src/emulator/seed.js';
import { PROJECT_ROOT, waitFor } from '../helpers/process.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** The app's persisted documents manifest, which its code generator writes. */
const MANIFEST = `${PROJECT_ROOT}examples/app/src/gql/persisted-documents.json`;
const SIGN_IN_SENTENCE = 'The pet store needs you to sign in: enter your API key and token above.';

let example: ReturnType<typeof spawn>;
let output = '';
let appUrl = '';
let gatewayUrl = '';
let browser: Browser;
/** Requests the pages made to any other host. */
const outside: string[] = [];
/** The bodies of the app's requests to the gateway. */
const sent: { body: Record<string, unknown>; headers: Record<string, string> }[] = [];

beforeAll(async () => {
  // As a user runs it (`npm run example`), on free ports; without the test runner's NODE_OPTIONS.
  const { NODE_OPTIONS: _loader, ...env } = process.env;
  example = spawn(process.execPath, ['scripts/example.js'], {
    cwd: PROJECT_ROOT,
    env: { ...env, APP_PORT: '0', PORT: '0' },
  });
  example.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  example.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // Installing the app's dependencies, when CI has not, takes most of this.
  [, appUrl = ''] = await waitFor(() => output, /The example app: (http:\/\/\S+)/, 170_000);
  [, gatewayUrl = ''] = await waitFor(() => output, /Its gateway \(trusted documents only\): (http:\/\/\S+)/);
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  // After a failure: stopped as Ctrl-C does, so that the gateway it started (a process group of its own) stops too.
  if (example !== undefined && example.exitCode === null && example.signalCode === null) {
    const exited = once(example, 'exit');
    example.kill('SIGTERM');
    await exited;
  }
}, 30_000);

/** A page of the app whose every request is checked: loopback goes through, anything else is refused. */
async function openApp(hash = ''): Promise<Page> {
  const context = await browser.newContext();
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (!LOOPBACK.has(url.hostname)) {
      outside.push(url.href);
      return route.abort('blockedbyclient');
    }
    if (url.href === gatewayUrl && route.request().method() === 'POST')
      sent.push({
        body: route.request().postDataJSON() as Record<string, unknown>,
        headers: route.request().headers(),
      });
    return route.continue();
  });
  const page = await context.newPage();
  await page.goto(`${appUrl}${hash}`);
  return page;
}

it("lists the emulator's available pets with their category and tags, asking by document key", async () => {
  const page = await openApp();

  const cards = page.locator('article.pet');
  await expect.poll(() => cards.count(), { timeout: 15_000 }).toBeGreaterThan(0);

  const available = seedPets().filter((pet) => pet.status === 'available');
  expect(await cards.locator('h3').allInnerTexts()).toEqual(available.map((pet) => pet.name));
  expect(await cards.first().innerText()).toContain('Cats · available');
  expect(await cards.first().locator('.tags li').allInnerTexts()).toEqual(['tag1', 'tag2']);
  // The app sent a key of its manifest and no document text, with the demo credentials.
  const keys = Object.keys(JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, string>);
  const request = sent.at(-1);
  expect(request?.body).toEqual({
    variables: { status: 'AVAILABLE' },
    extensions: { persistedQuery: { version: 1, sha256Hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) } },
  });
  expect(keys).toContain(
    (request?.body['extensions'] as { persistedQuery: { sha256Hash: string } }).persistedQuery.sha256Hash,
  );
  expect(request?.headers['authorization']).toBe('Bearer demo');
  mkdirSync('test-results', { recursive: true });
  await page.screenshot({ path: 'test-results/example-app.png', fullPage: true });
  await page.context().close();
  expect(outside).toEqual([]);
});

it('shows an order placed for a pet in the inventory count', async () => {
  const page = await openApp('#/pets/4');
  await page.getByRole('heading', { name: 'Dog 1' }).waitFor({ timeout: 15_000 });
  const placed = page.locator('.inventory tr[data-status="placed"] td');
  await placed.waitFor({ timeout: 15_000 });
  const before = Number(await placed.innerText());

  await page.getByLabel('Quantity').fill('3');
  await page.getByRole('button', { name: 'Place order' }).click();

  await expect
    .poll(() => page.locator('.outcome').innerText(), { timeout: 15_000 })
    .toMatch(/^Order \d+ placed: 3 ordered\.$/);
  await expect.poll(() => placed.innerText(), { timeout: 15_000 }).toBe(String(before + 3));
  await page.screenshot({ path: 'test-results/example-app-order.png', fullPage: true });
  await page.context().close();
  expect(outside).toEqual([]);
});

it('shows a missing credential as a sentence, and sends no token when none is given', async () => {
  const page = await openApp();
  await page.locator('article.pet').first().waitFor({ timeout: 15_000 });
  const requests = sent.length;

  await page.getByLabel('Token').fill('');
  await page.getByRole('button', { name: 'Sign in' }).click();

  await expect.poll(() => page.getByRole('alert').innerText(), { timeout: 15_000 }).toBe(SIGN_IN_SENTENCE);
  expect(await page.locator('article.pet').count()).toBe(0);
  const request = sent.slice(requests).at(-1);
  expect(request?.headers['authorization']).toBeUndefined();
  expect(request?.headers['api_key']).toBe('demo');
  await page.context().close();
  expect(outside).toEqual([]);
});

it("has the example's gateway refuse a document that is not in the app's manifest", async () => {
  const page = await openApp();
  // Sent from the app's page, as a changed copy of the app would: the gateway lets the origin in (CORS) and refuses the rest.
  const answers = await page.evaluate(async (url) => {
    const send = async (body: unknown) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', api_key: 'demo', authorization: 'Bearer demo' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    };
    const unknownKey = `sha256:${'0'.repeat(64)}`;
    return [
      await send({ extensions: { persistedQuery: { version: 1, sha256Hash: unknownKey } } }),
      await send({ query: '{ pet(id: "1") { name } }' }),
    ];
  }, gatewayUrl);

  const codes = answers.map(({ status, body }) => ({
    status,
    codes: (body as { errors?: { extensions?: { code?: string } }[] }).errors?.map((error) => error.extensions?.code),
    data: (body as { data?: unknown }).data,
  }));
  expect(codes).toEqual([
    { status: 400, codes: ['TRUSTED_DOCUMENT_NOT_FOUND'], data: undefined },
    { status: 400, codes: ['TRUSTED_DOCUMENT_REQUIRED'], data: undefined },
  ]);
  await page.context().close();
  expect(outside).toEqual([]);
});

it("shows a user's profile", async () => {
  const page = await openApp('#/users/user1');

  await expect.poll(() => page.locator('dl.profile').innerText(), { timeout: 15_000 }).toContain('email1@test.com');
  await page.context().close();
});

it('stops the app and its gateway on Ctrl-C (SIGINT)', async () => {
  const exited = once(example, 'exit');
  example.kill('SIGINT');

  const [code] = (await exited) as [number | null];
  expect({ code, stopped: output.includes('example stopped') }).toEqual({ code: 0, stopped: true });
  await expect(fetch(gatewayUrl)).rejects.toThrow();
  await expect(fetch(appUrl)).rejects.toThrow();
});
