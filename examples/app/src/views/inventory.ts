/** The store's inventory: quantities ordered, by order status. It needs the user's API key. */
import { request } from '../client';
import type { Credentials } from '../credentials';
import { alert, h } from '../dom';
import { sentences } from '../errors';
import { graphql } from '../gql';

const Inventory = graphql(`
  query Inventory {
    inventory {
      entries {
        status
        quantity
      }
    }
  }
`);

/** The inventory panel, read once now; `refresh` reads it again. */
export async function inventoryPanel(credentials: Credentials) {
  const element = h('aside', { class: 'inventory' });
  const refresh = async () => {
    const { data, failures } = await request(Inventory, {}, credentials);
    const rows = (data?.inventory.entries ?? []).map((entry) =>
      h('tr', { 'data-status': entry.status }, h('th', {}, entry.status), h('td', {}, String(entry.quantity))),
    );
    element.replaceChildren(
      h('h3', {}, 'Inventory'),
      failures.length > 0 ? alert(sentences(failures)) : '',
      data ? h('table', {}, ...rows) : '',
      data && rows.length === 0 ? h('p', {}, 'Nothing ordered yet.') : '',
    );
  };
  await refresh();
  return { element, refresh };
}
