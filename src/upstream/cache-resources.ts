/**
 * Which REST resources an upstream GET reads, and which a change touches: the tags the upstream
 * cache (`cache.ts`) files its entries under, so that a write through the gateway makes exactly
 * the entries it may have made wrong unreachable, for every caller at once. No dependencies:
 * the configuration checks UPSTREAM_CACHE's operation names against {@link CACHEABLE_OPERATIONS}.
 */
import type { UpstreamChange } from './changes.js';

/** The pet store's reads (`GET`) that may be cached, by operationId, with the resources each reads. */
const READS = {
  getPetById: '/pet/{petId}',
  findPetsByStatus: '/pet/findByStatus',
  findPetsByTags: '/pet/findByTags',
  getInventory: '/store/inventory',
  getOrderById: '/store/order/{orderId}',
  getUserByName: '/user/{username}',
} as const;

/** The operations a per-operation default (UPSTREAM_CACHE) may name. */
export const CACHEABLE_OPERATIONS: readonly string[] = Object.keys(READS);

/** The tag of every list of pets (`findByStatus`, `findByTags`): any pet change may move a pet in or out of one. */
const PET_LISTS = 'pet-lists';

/**
 * The resources a GET of `template` reads, as tags (`pet:1`, `pet-lists`, `inventory`,
 * `order:7`, `user:ann`); `path` is the call's encoded path, whose last segment is the id. A
 * template not known here reads no tracked resource (its entries expire, nothing invalidates them).
 */
export function resourceTags(template: string, path: string): string[] {
  const id = () => decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
  switch (template) {
    case READS.getPetById:
      return [`pet:${id()}`];
    case READS.findPetsByStatus:
    case READS.findPetsByTags:
      return [PET_LISTS];
    case READS.getInventory:
      return ['inventory'];
    case READS.getOrderById:
      return [`order:${id()}`];
    case READS.getUserByName:
      return [`user:${id()}`];
    default:
      return [];
  }
}

/** The tags a change makes stale: a pet's own and every pet list, an order, the inventory, a user. */
export function changedTags(change: UpstreamChange): string[] {
  switch (change.resource) {
    case 'pet':
      return [`pet:${change.id}`, PET_LISTS];
    case 'order':
      return [`order:${change.id}`];
    case 'inventory':
      return ['inventory'];
    case 'user':
      return [`user:${change.username}`];
  }
}
