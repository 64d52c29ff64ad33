/** The pets of a status, with their category and tags. */
import { request } from '../client';
import type { Credentials } from '../credentials';
import { alert, h } from '../dom';
import { sentences } from '../errors';
import { graphql } from '../gql';
import type { PetStatus } from '../gql/graphql';
import { petCard } from './pet-card';

const PetsByStatus = graphql(`
  query PetsByStatus($status: PetStatus!) {
    petsByStatus(status: [$status]) {
      id
      ...PetSummary
    }
  }
`);

const STATUSES: PetStatus[] = ['AVAILABLE', 'PENDING', 'SOLD'];

export async function petsPage(status: PetStatus, credentials: Credentials): Promise<HTMLElement> {
  const { data, failures } = await request(PetsByStatus, { status }, credentials);
  const tabs = STATUSES.map((each) =>
    h('a', { href: `#/status/${each}`, class: each === status ? 'current' : '' }, each.toLowerCase()),
  );
  return h(
    'section',
    {},
    h('h2', {}, 'Pets'),
    h('nav', { class: 'tabs' }, ...tabs),
    failures.length > 0 && alert(sentences(failures)),
    data && data.petsByStatus.length === 0 && h('p', {}, `No pet is ${status.toLowerCase()}.`),
    data && h('div', { class: 'pets' }, ...data.petsByStatus.map((pet) => petCard(pet.id, pet))),
  );
}
