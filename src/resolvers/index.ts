/**
 * All resolvers, one file per area.
 */
import type { Resolvers } from '../__generated__/resolvers-types.js';
import { inventoryResolvers } from './inventory.js';
import { orderResolvers } from './orders.js';
import { petResolvers } from './pets.js';
import { plantResolvers } from './plants.js';
import { DateTime, File } from './scalars.js';
import { userResolvers } from './users.js';

export const resolvers: Resolvers[] = [{ DateTime, File }, petResolvers, orderResolvers, inventoryResolvers, userResolvers, plantResolvers];
