/**
 * deletePet, deleteOrder and deleteUser: the DELETE calls the reference server serves, with the
 * credentials its OpenAPI document declares (bearer for pets, none for orders and users).
 */
import { describe, expect, it } from 'vitest';
import { ALL_CREDENTIALS, expectedRequest, received, useStack } from './helpers/stack.js';
import { ENFORCES_CREDENTIALS } from './helpers/upstream.js';

const stack = useStack();

describe('deletePet', () => {
  it('sends DELETE /pet/{petId} with the bearer token only, and the pet is gone', async () => {
    const result = await stack.gql('mutation { deletePet(id: 3) }', {}, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { deletePet: true } });
    expect(received(stack)).toEqual([{ ...expectedRequest('DELETE', '/api/v3/pet/3', 'bearer'), body: '' }]);
    expect((await stack.gql('{ pet(id: 3) { id } }', {}, ALL_CREDENTIALS)).data).toEqual({ pet: null });
  });

  it('rejects an id that is not an int64 before any call', async () => {
    const result = await stack.gql('mutation { deletePet(id: "3; DROP") }', {}, ALL_CREDENTIALS);

    expect(result.errors?.map((error) => error.extensions?.['code'])).toEqual(['BAD_USER_INPUT']);
    expect(stack.upstream()).toEqual([]);
  });

  it('sends the upstream no credential when the client gives none', async () => {
    await stack.gql('mutation { deletePet(id: 3) }');

    expect(received(stack)).toEqual([{ ...expectedRequest('DELETE', '/api/v3/pet/3', 'none'), body: '' }]);
  });

  // The reference server checks no credential: there the pet is deleted.
  it.runIf(ENFORCES_CREDENTIALS)(
    'is UNAUTHENTICATED when the upstream refuses a call without a credential',
    async () => {
      const result = await stack.gql('mutation { deletePet(id: 3) }');

      expect(result.errors?.map((error) => [error.extensions?.['code'], error.extensions?.['upstream']])).toEqual([
        ['UNAUTHENTICATED', { service: 'petstore', operation: 'deletePet', status: 401 }],
      ]);
    },
  );
});

describe('deleteOrder', () => {
  it('sends DELETE /store/order/{orderId} without credentials, and the order is gone', async () => {
    const result = await stack.gql('mutation { deleteOrder(id: 2) }', {}, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { deleteOrder: true } });
    expect(received(stack)).toEqual([{ ...expectedRequest('DELETE', '/api/v3/store/order/2', 'none'), body: '' }]);
    expect((await stack.gql('{ order(id: 2) { id } }')).data).toEqual({ order: null });
  });
});

describe('deleteUser', () => {
  it('sends DELETE /user/{username} without credentials, the name percent-encoded, and the user is gone', async () => {
    await stack.gql('mutation { createUser(input: { username: "ann lee/x" }) { username } }');
    stack.upstream();

    const result = await stack.gql('mutation { deleteUser(username: "ann lee/x") }', {}, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { deleteUser: true } });
    expect(received(stack)).toEqual([{ ...expectedRequest('DELETE', '/api/v3/user/ann%20lee%2Fx', 'none'), body: '' }]);
    expect((await stack.gql('{ user(username: "ann lee/x") { username } }')).data).toEqual({ user: null });
  });

  it('rejects an empty user name before any call', async () => {
    const result = await stack.gql('mutation { deleteUser(username: "") }');

    expect(result.errors?.map((error) => error.extensions?.['code'])).toEqual(['BAD_USER_INPUT']);
    expect(stack.upstream()).toEqual([]);
  });
});
