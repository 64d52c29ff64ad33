/**
 * GraphiQL as a newcomer first sees it: one tab per area with operations that run as they
 * are (pets, orders, inventory, users, plants, and an upload, which needs a multipart client),
 * and, on the embedded emulator only, demo credentials in the headers tab, so that the first
 * query succeeds. With real upstreams nothing is prefilled: a credential is the user's to give.
 *
 * The operations are `.graphql` files in `schema/examples/`, one per tab, so that they read and
 * diff as GraphQL; a test runs each of them against the schema.
 */
import { readFileSync } from 'node:fs';
import type { GraphiQLOptions } from 'graphql-yoga';
import { projectFile } from '../project-files.js';

/** The credentials prefilled on the embedded emulator, which accepts any non-empty credential. */
export const DEMO_HEADERS = { Authorization: 'Bearer demo', api_key: 'demo' };

/** One tab: its operations and, for those that take them, variables to start from. */
export type Tab = { query: string; variables?: string };

/** The tabs in order (the first one runs with the ▶ button as it is): each one's file, and its variables. */
const TABS: readonly { file: string; variables?: Record<string, unknown> }[] = [
  { file: 'pets.graphql' },
  {
    file: 'orders.graphql',
    variables: { input: { petId: '1', quantity: 2, shipDate: '2030-01-01T10:00:00Z', status: 'placed' } },
  },
  { file: 'inventory.graphql' },
  {
    file: 'users.graphql',
    variables: {
      input: { username: 'newcomer', firstName: 'New', email: 'newcomer@example.com', password: 'choose-one' },
    },
  },
  { file: 'plants.graphql' },
  { file: 'upload.graphql' },
];

let tabs: readonly Tab[] | undefined;

/** The example tabs, read from `schema/examples/` when first asked for (only when GraphiQL is on). */
export function exampleTabs(): readonly Tab[] {
  tabs ??= TABS.map(({ file, variables }) => ({
    query: readFileSync(projectFile(`schema/examples/${file}`), 'utf8'),
    ...(variables ? { variables: JSON.stringify(variables, null, 2) } : {}),
  }));
  return tabs;
}

/**
 * GraphiQL's options: the example tabs, with the demo credentials in each tab's headers when
 * the upstreams are the embedded emulator (and only then).
 */
export function graphiqlOptions(upstreams: { emulator: boolean }): GraphiQLOptions {
  const headers = upstreams.emulator ? JSON.stringify(DEMO_HEADERS, null, 2) : undefined;
  // The curl command of the upload tab: with the demo token on the emulator, a placeholder otherwise.
  const token = upstreams.emulator ? 'demo' : '<your token>';
  return {
    title: 'Pet store GraphQL gateway',
    defaultTabs: exampleTabs().map((tab) => ({
      query: tab.query.replace('Bearer TOKEN', `Bearer ${token}`),
      variables: tab.variables ?? null,
      headers: headers ?? null,
    })),
    // New tabs get the same headers; with real upstreams, the user types their own.
    ...(headers ? { defaultHeaders: headers } : {}),
    // A user's own credentials are not written to the browser's storage; the demo ones may be.
    shouldPersistHeaders: upstreams.emulator,
  };
}
