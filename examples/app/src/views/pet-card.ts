/**
 * A pet as the list and the pet's page show it. The fragment is what this view reads; a query
 * spreads it, and fragment masking keeps the query's other code from reading its fields.
 */
import { h } from '../dom';
import { getFragmentData, graphql, type FragmentType } from '../gql';

export const PetSummary = graphql(`
  fragment PetSummary on Pet {
    name
    status
    category {
      name
    }
    tags {
      name
    }
  }
`);

export function petCard(id: string, ref: FragmentType<typeof PetSummary>): HTMLElement {
  const pet = getFragmentData(PetSummary, ref);
  const tags = pet.tags.map((tag) => tag.name).filter((name) => name !== null && name !== undefined);
  return h(
    'article',
    { class: 'pet', 'data-pet-id': id },
    h('h3', {}, h('a', { href: `#/pets/${id}` }, pet.name ?? `Pet ${id}`)),
    h('p', {}, `${pet.category?.name ?? 'No category'} · ${pet.status?.toLowerCase() ?? 'no status'}`),
    h('ul', { class: 'tags' }, ...tags.map((name) => h('li', {}, name))),
  );
}
