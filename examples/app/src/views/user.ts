/** A user's profile, by user name. */
import { request } from '../client';
import type { Credentials } from '../credentials';
import { alert, h } from '../dom';
import { sentences } from '../errors';
import { graphql } from '../gql';

const UserProfile = graphql(`
  query UserProfile($username: String!) {
    user(username: $username) {
      username
      firstName
      lastName
      email
      phone
    }
  }
`);

export async function userPage(username: string, credentials: Credentials): Promise<HTMLElement> {
  const { data, failures } = await request(UserProfile, { username }, credentials);
  const user = data?.user;
  const name = h('input', { name: 'username', value: username, required: true });
  const open = (event: Event) => {
    event.preventDefault();
    location.hash = `#/users/${encodeURIComponent(name.value)}`;
  };
  return h(
    'section',
    {},
    h('h2', {}, 'Profile'),
    h('form', { onsubmit: open }, h('label', {}, 'User name ', name), h('button', { type: 'submit' }, 'Open')),
    failures.length > 0 && alert(sentences(failures)),
    data && !user && h('p', {}, `There is no user ${username}.`),
    user &&
      h(
        'dl',
        { class: 'profile' },
        ...[
          ['User name', user.username],
          ['Name', [user.firstName, user.lastName].filter(Boolean).join(' ')],
          ['Email', user.email],
          ['Phone', user.phone],
        ].flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value || '—')]),
      ),
  );
}
