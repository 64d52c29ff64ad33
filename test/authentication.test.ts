/**
 * docs/authentication.md: the gateway forwards credentials and never checks them. A request
 * without the credential an operation needs still runs, and that field carries the upstream's
 * refusal as UNAUTHENTICATED; with it, the upstream receives it and answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './helpers/stack.js';

const PAGE_QUERY = '{ inventory { entries { status quantity } } }';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

async function ask(headers: Record<string, string>) {
  const response = await fetch(stack.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: PAGE_QUERY }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("the authentication page's example", () => {
  it('without api_key: 200, no data, UNAUTHENTICATED at the field with the upstream 401', async () => {
    stack.upstream();

    const answer = await ask({});

    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      data: null,
      errors: [
        {
          path: ['inventory'],
          extensions: {
            code: 'UNAUTHENTICATED',
            upstream: { service: 'petstore', operation: 'getInventory', status: 401 },
          },
        },
      ],
    });
    const [sent] = stack.upstream();
    expect(sent?.path).toBe('/api/v3/store/inventory');
    expect(sent?.headers['api_key']).toBeUndefined();
  });

  it('with api_key: the upstream receives it and the field is answered', async () => {
    stack.upstream();

    const answer = await ask({ api_key: 'demo' });

    expect(answer.status).toBe(200);
    expect(answer.body['errors']).toBeUndefined();
    expect(answer.body['data']).toMatchObject({ inventory: { entries: expect.any(Array) as unknown } });
    expect(stack.upstream().map((sent) => sent.headers['api_key'])).toEqual(['demo']);
  });
});
