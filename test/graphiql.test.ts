/**
 * GraphiQL is served by the gateway itself, with no script, style or font from another host.
 * (The real-browser test that runs a query in it is part of the operations work.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack, type Stack } from './helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

it('serves GraphiQL at /graphql to a browser, without loading anything from another host', async () => {
  const response = await fetch(stack.url, { headers: { accept: 'text/html' } });
  const html = await response.text();

  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  expect(html).toContain('<div id="root"></div>');
  expect(html.match(/<(script|link|img)\b[^>]*\b(src|href)="(https?:)?\/\/[^"]*"/gi) ?? []).toEqual([]);
});

it('can be switched off', async () => {
  const quiet = await startStack({ graphiql: false }, stack.emulator);
  try {
    const response = await fetch(quiet.url, { headers: { accept: 'text/html' } });
    expect(await response.text()).not.toContain('<div id="root"></div>');
  } finally {
    await quiet.close();
  }
});
