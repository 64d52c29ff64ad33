/**
 * The emulator's in-memory data: the records of both REST areas and the seed
 * that mirrors the public pet store demo.
 *
 * Every int64 identifier is held as its canonical decimal string, because a
 * JavaScript number cannot represent the whole int64 range and the gateway
 * must be able to prove that ids such as 9223372036854775807 survive the trip.
 */

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

function seedPets(): Pet[] {
  const categories: Record<string, Category> = {
    Dogs: { id: '1', name: 'Dogs' },
    Cats: { id: '2', name: 'Cats' },
    Rabbits: { id: '3', name: 'Rabbits' },
    Lions: { id: '4', name: 'Lions' },
  };
  const rows: Array<[number, string, string, [string, string], string]> = [
    [1, 'Cat 1', 'Cats', ['tag1', 'tag2'], 'available'],
    [2, 'Cat 2', 'Cats', ['tag2', 'tag3'], 'available'],
    [3, 'Cat 3', 'Cats', ['tag3', 'tag4'], 'pending'],
    [4, 'Dog 1', 'Dogs', ['tag1', 'tag2'], 'available'],
    [5, 'Dog 2', 'Dogs', ['tag2', 'tag3'], 'sold'],
    [6, 'Dog 3', 'Dogs', ['tag3', 'tag4'], 'pending'],
    [7, 'Lion 1', 'Lions', ['tag1', 'tag2'], 'available'],
    [8, 'Lion 2', 'Lions', ['tag2', 'tag3'], 'available'],
    [9, 'Lion 3', 'Lions', ['tag3', 'tag4'], 'available'],
    [10, 'Rabbit 1', 'Rabbits', ['tag3', 'tag4'], 'available'],
  ];
  return rows.map(([id, name, category, tagNames, status]) => ({
    id: String(id),
    category: { ...categories[category] },
    name,
    photoUrls: ['url1', 'url2'],
    // The upstream numbers tags by their position within each pet, not globally.
    tags: tagNames.map((tagName, index) => ({ id: String(index + 1), name: tagName })),
    status,
  }));
}

function seedOrders(): Order[] {
  const rows: Array<[number, number, string]> = [
    [1, 100, 'placed'],
    [2, 50, 'approved'],
    [3, 50, 'delivered'],
  ];
  return rows.map(([id, quantity, status]) => ({
    id: String(id),
    petId: '1',
    quantity,
    shipDate: SEED_SHIP_DATE,
    status,
    complete: true,
  }));
}

function seedUsers(): User[] {
  return Array.from({ length: 10 }, (_, index) => {
    const n = index + 1;
    return {
      id: String(n),
      username: `user${n}`,
      firstName: `first name ${n}`,
      lastName: `last name ${n}`,
      email: `email${n}@test.com`,
      password: 'XXXXXXXXXXX',
      phone: '123-456-7890',
      userStatus: (index % 3) + 1,
    };
  });
}

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
 * Removes the entries that `matches` selects and appends `item`.
 *
 * The upstream implements every update as remove-then-append, so an updated
 * record moves to the end of list results; the emulator keeps that order.
 */
function replaceAtEnd<T>(list: T[], matches: (entry: T) => boolean, item: T): void {
  removeWhere(list, matches);
  list.push(item);
}

function removeWhere<T>(list: T[], matches: (entry: T) => boolean): void {
  const kept = list.filter((entry) => !matches(entry));
  list.splice(0, list.length, ...kept);
}

/**
 * Mutable state of both areas. Lists keep the upstream's "store order": the
 * seed order, with every written record moved to the end.
 */
export class Store {
  pets: Pet[] = [];
  orders: Order[] = [];
  users: User[] = [];
  plants: Plant[] = [];

  constructor() {
    this.reset();
  }

  /** Restores the seeded data and drops everything written since. */
  reset(): void {
    this.pets = seedPets();
    this.orders = seedOrders();
    this.users = seedUsers();
    this.plants = [];
  }

  /** Finds a pet by canonical id. */
  findPet(id: string): Pet | undefined {
    return this.pets.find((pet) => pet.id === id);
  }

  /** The id a new pet without one receives. */
  nextPetId(): string {
    return nextFreeId(this.pets.map((pet) => pet.id));
  }

  /** Inserts or replaces the pet with the same id. */
  savePet(pet: Pet): void {
    replaceAtEnd(this.pets, (entry) => entry.id === pet.id, pet);
  }

  /** Deletes a pet if present; unknown ids are ignored like upstream. */
  deletePet(id: string): void {
    removeWhere(this.pets, (pet) => pet.id === id);
  }

  /** Finds an order by canonical id. */
  findOrder(id: string): Order | undefined {
    return this.orders.find((order) => order.id === id);
  }

  /** The id a new order without one receives. */
  nextOrderId(): string {
    return nextFreeId(this.orders.map((order) => order.id));
  }

  /** Inserts or replaces the order with the same id. */
  saveOrder(order: Order): void {
    replaceAtEnd(this.orders, (entry) => entry.id === order.id, order);
  }

  /** Deletes an order if present. */
  deleteOrder(id: string): void {
    removeWhere(this.orders, (order) => order.id === id);
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
    replaceAtEnd(
      this.users,
      (entry) => entry.username === user.username || entry.username === previousUsername,
      user,
    );
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
