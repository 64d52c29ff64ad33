/**
 * The pet store's credentials, as the user gives them: its API key (sent as `api_key`) and a
 * token (sent as `Authorization: Bearer …`). Kept for the browser tab only (sessionStorage), so
 * that a reload keeps the user signed in and closing the tab forgets them.
 */
export type Credentials = { apiKey: string; token: string };

const KEY = 'pet-store-credentials';
/** What the embedded emulator accepts: any non-empty value, `demo` by convention. */
const DEMO: Credentials = { apiKey: 'demo', token: 'demo' };

/** The credentials of this tab: the last ones saved, else the demo ones on a demo build, else none. */
export function loadCredentials(): Credentials {
  const saved = sessionStorage.getItem(KEY);
  if (saved !== null) return JSON.parse(saved) as Credentials;
  return DEMO_CREDENTIALS ? DEMO : { apiKey: '', token: '' };
}

export function saveCredentials(credentials: Credentials): void {
  sessionStorage.setItem(KEY, JSON.stringify(credentials));
}
