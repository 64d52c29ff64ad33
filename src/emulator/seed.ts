/**
 * The public pet store demo's data, as both fakes of it start from it: the embedded emulator
 * (`store.ts`) and the tests' double of the reference server. Each call returns fresh records,
 * so a store can change its own; each store adds what is its own (the reference server's ship
 * date format, its extra user).
 */

/** The password the reference server shows for seeded users (and for users created by a form). */
export const MASKED_PASSWORD = 'XXXXXXXXXXX';

/** A seeded pet; tags are numbered by their position within each pet, as the upstream does. */
export type SeedPet = {
  id: string;
  category: { id: string; name: string };
  name: string;
  photoUrls: string[];
  tags: { id: string; name: string }[];
  status: string;
};

const CATEGORIES = { Dogs: '1', Cats: '2', Rabbits: '3', Lions: '4' } as const;

const PETS: readonly [
  id: number,
  name: string,
  category: keyof typeof CATEGORIES,
  tags: [string, string],
  status: string,
][] = [
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

/** The ten seeded pets. */
export function seedPets(): SeedPet[] {
  return PETS.map(([id, name, category, tagNames, status]) => ({
    id: String(id),
    category: { id: CATEGORIES[category], name: category },
    name,
    photoUrls: ['url1', 'url2'],
    tags: tagNames.map((tagName, index) => ({ id: String(index + 1), name: tagName })),
    status,
  }));
}

/** The three seeded orders, all of pet 1 and complete, with the ship date as the store writes it. */
export function seedOrders<D>(
  shipDate: D,
): { id: string; petId: string; quantity: number; shipDate: D; status: string; complete: boolean }[] {
  const orders: [id: number, quantity: number, status: string][] = [
    [1, 100, 'placed'],
    [2, 50, 'approved'],
    [3, 50, 'delivered'],
  ];
  return orders.map(([id, quantity, status]) => ({
    id: String(id),
    petId: '1',
    quantity,
    shipDate,
    status,
    complete: true,
  }));
}

/** A seeded user: `user<suffix>`, its names and email from the same suffix unless given. */
export function seedUser(
  id: number,
  suffix = String(id),
  email = `email${suffix}@test.com`,
  userStatus = ((id - 1) % 3) + 1,
) {
  return {
    id: String(id),
    username: `user${suffix}`,
    firstName: `first name ${suffix}`,
    lastName: `last name ${suffix}`,
    email,
    password: MASKED_PASSWORD,
    phone: '123-456-7890',
    userStatus,
  };
}

/** The ten seeded users, `user1` to `user10`. */
export function seedUsers(): ReturnType<typeof seedUser>[] {
  return Array.from({ length: 10 }, (_, index) => seedUser(index + 1));
}
