/**
 * Writes through the gateway tell what they changed upstream (src/upstream/changes.ts), once the
 * upstream has accepted them and before their answer is sent: the feed the upstream cache and
 * live queries listen to. A write the upstream refuses changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { LocalChangeFeed, type UpstreamChange } from '../src/upstream/changes.js';
import { ALL_CREDENTIALS, useStack } from './helpers/stack.js';

const stack = useStack();

/**
 * Sends `query` and returns what the feed heard while it ran, with, for each change, whether the
 * answer had already arrived when it was heard.
 */
async function heard(query: string, variables?: Record<string, unknown>) {
  const changes: { changes: readonly UpstreamChange[]; afterAnswer: boolean }[] = [];
  let answered = false;
  const stop = stack.changes.listen((told) => changes.push({ changes: told, afterAnswer: answered }));
  try {
    const result = await stack.gql(query, variables, ALL_CREDENTIALS);
    answered = true;
    return { result, changes };
  } finally {
    stop();
  }
}

const inventory = { resource: 'inventory' } as const;

describe('what writes tell the change feed', () => {
  it.each([
    ['updatePet', 'mutation { updatePet(id: 3, input: { name: "Renamed", status: SOLD }) { id } }', [['pet', '3']]],
    ['updatePetWithForm', 'mutation { updatePetWithForm(id: 4, name: "Formed") { id } }', [['pet', '4']]],
    ['deletePet', 'mutation { deletePet(id: 5) }', [['pet', '5']]],
    ['deleteOrder', 'mutation { deleteOrder(id: 1) }', [['order', '1']]],
  ] as const)('%s tells the resource it changed and the inventory, before its answer', async (_, query, expected) => {
    const { result, changes } = await heard(query);

    expect(result.errors).toBeUndefined();
    const [[resource, id]] = expected;
    expect(changes).toEqual([{ changes: [{ resource, id }, inventory], afterAnswer: false }]);
  });

  it('addPet tells the id the pet store gave the new pet', async () => {
    const { result, changes } = await heard('mutation { addPet(input: { name: "Newcomer" }) { id } }');

    const id = (result.data?.['addPet'] as { id: string }).id;
    expect(changes).toEqual([{ changes: [{ resource: 'pet', id }, inventory], afterAnswer: false }]);
  });

  it('placeOrder tells its order and the inventory', async () => {
    const { result, changes } = await heard('mutation { placeOrder(input: { id: 77, petId: 1, quantity: 1 }) { id } }');

    expect(result.errors).toBeUndefined();
    expect(changes).toEqual([{ changes: [{ resource: 'order', id: '77' }, inventory], afterAnswer: false }]);
  });

  it('user writes tell the user names they changed, both of a renamed user', async () => {
    const created = await heard('mutation { createUser(input: { username: "newcomer" }) { username } }');
    const renamed = await heard(
      'mutation { updateUser(username: "newcomer", input: { username: "renamed" }) { username } }',
    );
    const deleted = await heard('mutation { deleteUser(username: "renamed") }');

    expect(created.changes).toEqual([{ changes: [{ resource: 'user', username: 'newcomer' }], afterAnswer: false }]);
    expect(renamed.changes).toEqual([
      {
        changes: [
          { resource: 'user', username: 'newcomer' },
          { resource: 'user', username: 'renamed' },
        ],
        afterAnswer: false,
      },
    ]);
    expect(deleted.changes).toEqual([{ changes: [{ resource: 'user', username: 'renamed' }], afterAnswer: false }]);
  });

  it('a write the upstream refuses tells nothing; reads tell nothing', async () => {
    const refused = await heard('mutation { updatePetWithForm(id: 999999, name: "Nobody") { id } }');
    const read = await heard('{ pet(id: 1) { id } order(id: 1) { id } }');

    expect(refused.result.errors?.map((error) => error.extensions?.['code'])).toEqual(['NOT_FOUND']);
    expect(refused.changes).toEqual([]);
    expect(read.result.errors).toBeUndefined();
    expect(read.changes).toEqual([]);
  });
});

describe('LocalChangeFeed', () => {
  it('tells every listener, in the order they started, until each stops; one that throws is reported', async () => {
    const reported: unknown[] = [];
    const feed = new LocalChangeFeed((error) => reported.push(error));
    const heardBy: string[] = [];
    const stopFirst = feed.listen(() => heardBy.push('first'));
    feed.listen(() => {
      throw new Error('a listener failed');
    });
    feed.listen(() => heardBy.push('third'));

    await feed.changed([inventory]);
    stopFirst();
    await feed.changed([inventory]);
    await feed.changed([]);

    expect(heardBy).toEqual(['first', 'third', 'third']);
    expect(reported).toEqual([new Error('a listener failed'), new Error('a listener failed')]);
  });
});
