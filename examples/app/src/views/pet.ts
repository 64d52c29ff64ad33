/**
 * One pet's page: the pet, an order form, and the store's inventory, read again after each
 * order so that the count the order changed shows.
 */
import { request } from '../client';
import type { Credentials } from '../credentials';
import { alert, h } from '../dom';
import { sentences } from '../errors';
import { graphql } from '../gql';
import { inventoryPanel } from './inventory';
import { petCard } from './pet-card';

const PetPage = graphql(`
  query PetPage($id: ID!) {
    pet(id: $id) {
      id
      ...PetSummary
    }
  }
`);

const PlaceOrder = graphql(`
  mutation PlaceOrder($petId: ID!, $quantity: Int!) {
    placeOrder(input: { petId: $petId, quantity: $quantity, status: "placed" }) {
      id
      quantity
      status
    }
  }
`);

export async function petPage(id: string, credentials: Credentials): Promise<HTMLElement> {
  const [{ data, failures }, inventory] = await Promise.all([
    request(PetPage, { id }, credentials),
    inventoryPanel(credentials),
  ]);
  const page = h('section', {}, h('p', {}, h('a', { href: '#/' }, '← All pets')));
  if (failures.length > 0) page.append(alert(sentences(failures)));
  if (data && data.pet === null) page.append(h('p', {}, `There is no pet ${id}.`));
  if (!data?.pet) return page;
  page.append(petCard(data.pet.id, data.pet), orderForm(data.pet.id, credentials, inventory), inventory.element);
  return page;
}

/** Places an order for the pet, says how it went, and refreshes the inventory. */
function orderForm(petId: string, credentials: Credentials, inventory: { refresh(): Promise<void> }): HTMLElement {
  const quantity = h('input', { type: 'number', name: 'quantity', min: 1, value: 1, required: true });
  const outcome = h('div', { class: 'outcome' });
  const submit = async (event: Event) => {
    event.preventDefault();
    const { data, failures } = await request(PlaceOrder, { petId, quantity: quantity.valueAsNumber }, credentials);
    outcome.replaceChildren(
      data ? h('p', {}, `Order ${data.placeOrder.id} placed: ${data.placeOrder.quantity ?? 0} ordered.`) : '',
      failures.length > 0 ? alert(sentences(failures)) : '',
    );
    await inventory.refresh();
  };
  return h(
    'form',
    { class: 'order', onsubmit: (event) => void submit(event) },
    h('h3', {}, 'Order this pet'),
    h('label', {}, 'Quantity ', quantity),
    h('button', { type: 'submit' }, 'Place order'),
    outcome,
  );
}
