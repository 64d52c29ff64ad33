/**
 * The app: a sign-in form for the pet store's credentials, and three pages chosen by the URL's
 * hash: the pets of a status (`#/status/AVAILABLE`), one pet (`#/pets/1`), a user (`#/users/user1`).
 */
import { loadCredentials, saveCredentials, type Credentials } from './credentials';
import { h } from './dom';
import { petPage } from './views/pet';
import { petsPage } from './views/pets';
import { userPage } from './views/user';

let credentials = loadCredentials();
const main = h('main', { 'aria-live': 'polite' });
/** Counts renders, so that a page whose answer comes after the user moved on is dropped. */
let renders = 0;

function page(route: string): Promise<HTMLElement> {
  const [, kind = '', value = ''] = route.split('/').map(decodeURIComponent);
  if (kind === 'pets') return petPage(value, credentials);
  if (kind === 'users') return userPage(value || 'user1', credentials);
  const status = (['AVAILABLE', 'PENDING', 'SOLD'] as const).find((each) => each === value);
  return petsPage(status ?? 'AVAILABLE', credentials);
}

async function render(): Promise<void> {
  const render = ++renders;
  main.setAttribute('aria-busy', 'true');
  const content = await page(location.hash.slice(1));
  if (render !== renders) return;
  main.replaceChildren(content);
  main.removeAttribute('aria-busy');
}

function signInForm(): HTMLElement {
  const apiKey = h('input', { name: 'apiKey', value: credentials.apiKey, autocomplete: 'off' });
  const token = h('input', { name: 'token', type: 'password', value: credentials.token, autocomplete: 'off' });
  const signIn = (event: Event) => {
    event.preventDefault();
    credentials = { apiKey: apiKey.value.trim(), token: token.value.trim() } satisfies Credentials;
    saveCredentials(credentials);
    void render();
  };
  return h(
    'form',
    { class: 'sign-in', onsubmit: signIn },
    h('label', {}, 'API key ', apiKey),
    h('label', {}, 'Token ', token),
    h('button', { type: 'submit' }, 'Sign in'),
  );
}

document.body.append(
  h(
    'header',
    {},
    h('h1', {}, 'Pet store'),
    h('nav', {}, h('a', { href: '#/' }, 'Pets'), ' ', h('a', { href: '#/users/user1' }, 'Profile')),
    signInForm(),
  ),
  main,
);
window.addEventListener('hashchange', () => void render());
void render();
