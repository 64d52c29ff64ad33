/**
 * Which live queries a change concerns, in the live query store's resource identifiers
 * (@n1ru4l/in-memory-live-query-store): `Type:id` for every object with an `id: ID!` a live
 * query's result holds, `Query.field` for each root field it selects, `Query.field(id:"…")` for
 * a root field with an `id` argument, and `Query.user(username:"…")` (the index this gateway
 * asks the store to keep, since a user's key is its username, not an id).
 *
 * The same mapping serves both ways a change is learnt: a write through any replica (the change
 * feed, src/upstream/changes.ts) and a difference found by polling the upstream (poller.ts).
 */
import type { UpstreamChange } from '../upstream/changes.js';
import { changeOf, operationRow, type Resource } from '../upstream/operations.js';

/** The root fields the store keeps an index of by argument, beyond its own `id` one. */
export const INDEXED_ROOT_FIELDS = [{ field: 'Query.user', args: ['username'] }] as const;

/**
 * The identifiers a change invalidates. A pet may enter or leave any list (a status or a tag
 * changed, a pet added or deleted), so every live list of pets is run again: coarse, but never
 * stale. A pet asked for by id without selecting its `id` is found by its root field.
 */
export function identifiersOfChange(change: UpstreamChange): string[] {
  switch (change.resource) {
    case 'pet':
      return [
        `Pet:${change.id}`,
        `Query.pet(id:"${change.id}")`,
        'Query.pets',
        'Query.petsByStatus',
        'Query.petsByTags',
      ];
    case 'order':
      return [`Order:${change.id}`, `Query.order(id:"${change.id}")`];
    case 'inventory':
      return ['Query.inventory'];
    case 'user':
      return [`Query.user(username:"${change.username}")`];
  }
}

/**
 * The identifiers a difference in an upstream read invalidates, from what its operation's row
 * says it reads: one item is invalidated as a change of it would be; a list or a whole resource
 * is each root field the row says the read feeds. Undefined for a call that reads nothing the
 * table knows of (a write, or an area whose reads are not GETs): it is not polled.
 */
export function identifiersOfRead(call: { operation: string; resources?: readonly Resource[] }): string[] | undefined {
  const row = operationRow(call.operation);
  const read = row?.reads === undefined ? undefined : call.resources?.[0];
  if (row === undefined || read === undefined) return undefined;
  const change = changeOf(read);
  if (change !== undefined) return identifiersOfChange(change);
  return row.graph.fields.filter((field) => field.startsWith('Query.'));
}
