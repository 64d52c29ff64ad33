/**
 * The emulator's in-memory data: the records of both REST areas and the seed
 * that mirrors the public pet store demo.
 *
 * Every int64 identifier is held as its canonical decimal string, because a
 * JavaScript number cannot represent the whole int64 range and the gateway
 * must be able to prove that ids such as 9223372036854775807 survive the trip.
 */
import { DemoLists, removeWhere, replaceAtEnd } from './demo-lists.js';
import { seedOrders, seedPets, seedUsers } from './seed.js';

export type Category = { id?: string; name?: string };
export type Tag = { id?: string; name?: string };

export type Pet = {
  id: string;
  category?: Category;
  name: string;
  photoUrls: string[];
  tags: Tag[];
  status?: string;
};

export type Order = {
  id: string;
  petId?: string;
  quantity?: number;
  /** ISO 8601 in UTC, e.g. 2025-01-01T00:00:00.000Z */
  shipDate?: string;
  status?: string;
  complete?: boolean;
};

export type User = {
  id?: string;
  username: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  password?: string;
  phone?: string;
  userStatus?: number;
};

export type Plant = { id: string; name: string; tag?: string };

/** The values a pet's status may take, in the order the upstream lists them. */
export const PET_STATUSES = ['available', 'pending', 'sold'] as const;

const INT64_MAX = 9223372036854775807n;

/** A fixed ship date keeps seeded orders identical between runs, unlike the upstream's load time. */
const SEED_SHIP_DATE = '2025-01-01T00:00:00.000Z';

/**
 * Picks the id the upstream would hand out next: one above the highest id in
 * use. If that would leave the int64 range, the lowest free positive id is
 * used instead so that creation never fails.
 */
function nextFreeId(ids: Iterable<string>): string {
  const taken = new Set<string>();
  let max = 0n;
  for (const id of ids) {
    taken.add(id);
    const value = BigInt(id);
    if (value > max) max = value;
  }
  if (max < INT64_MAX) return (max + 1n).toString();
  let candidate = 1n;
  while (taken.has(candidate.toString())) candidate += 1n;
  return candidate.toString();
}

/**
 * Mutable state of both areas. Lists keep the upstream's "store order": the
 * seed order, with every written record moved to the end.
 */
export class Store extends DemoLists<Pet, Order, User> {
  plants: Plant[] = [];

  constructor() {
    super({ pets: seedPets, orders: () => seedOrders(SEED_SHIP_DATE), users: seedUsers });
  }

  /** Restores the seeded data and drops everything written since, plants included. */
  override reset(): void {
    super.reset();
    this.plants = [];
  }

  /** The id a new pet without one receives. */
  nextPetId(): string {
    return nextFreeId(this.pets.map((pet) => pet.id));
  }

  /** The id a new order without one receives. */
  nextOrderId(): string {
    return nextFreeId(this.orders.map((order) => order.id));
  }

  /** Finds a user by exact username. */
  findUser(username: string): User | undefined {
    return this.users.find((user) => user.username === username);
  }

  /**
   * Stores `user`, replacing the user called `previousUsername` (a rename)
   * and any user that already has the new username, which keeps usernames unique.
   */
  saveUser(user: User, previousUsername: string = user.username): void {
    replaceAtEnd(this.users, (entry) => entry.username === user.username || entry.username === previousUsername, user);
  }

  /** Deletes a user if present. */
  deleteUser(username: string): void {
    removeWhere(this.users, (user) => user.username === username);
  }

  /** Inserts or replaces the plant with the same id. */
  savePlant(plant: Plant): void {
    replaceAtEnd(this.plants, (entry) => entry.id === plant.id, plant);
  }
}
