/**
 * The lists both fakes of the pet store keep (the embedded emulator's `Store` and the tests'
 * double of the reference server): pets, orders and users in the upstream's "store order", the
 * seed order with every written record moved to the end, because the upstream implements every
 * update as remove-then-append. Each fake extends it with what is its own.
 */

/** Removes the entries that `matches` selects, in place. */
export function removeWhere<T>(list: T[], matches: (entry: T) => boolean): void {
  const kept = list.filter((entry) => !matches(entry));
  list.splice(0, list.length, ...kept);
}

/** Removes the entries that `matches` selects and appends `item`: an upsert that moves it to the end. */
export function replaceAtEnd<T>(list: T[], matches: (entry: T) => boolean, item: T): void {
  removeWhere(list, matches);
  list.push(item);
}

/** Where each list starts from (fresh records on every call). */
export type DemoSeed<P, O, U> = { pets: () => P[]; orders: () => O[]; users: () => U[] };

/** Pets, orders and users, seeded, with the operations both fakes perform the same way. */
export class DemoLists<P extends { id: string }, O extends { id: string }, U> {
  pets: P[] = [];
  orders: O[] = [];
  users: U[] = [];
  readonly #seed: DemoSeed<P, O, U>;

  constructor(seed: DemoSeed<P, O, U>) {
    this.#seed = seed;
    this.reset();
  }

  /** Restores the seeded data and drops everything written since. */
  reset(): void {
    this.pets = this.#seed.pets();
    this.orders = this.#seed.orders();
    this.users = this.#seed.users();
  }

  /** Finds a pet by canonical id. */
  findPet(id: string): P | undefined {
    return this.pets.find((pet) => pet.id === id);
  }

  /** Upsert: any pet with the same id is removed, the new one is appended. */
  savePet(pet: P): void {
    replaceAtEnd(this.pets, (entry) => entry.id === pet.id, pet);
  }

  /** Deletes a pet if present; unknown ids are ignored, as upstream. */
  deletePet(id: string): void {
    removeWhere(this.pets, (pet) => pet.id === id);
  }

  /** Finds an order by canonical id. */
  findOrder(id: string): O | undefined {
    return this.orders.find((order) => order.id === id);
  }

  /** Upsert: any order with the same id is removed, the new one is appended. */
  saveOrder(order: O): void {
    replaceAtEnd(this.orders, (entry) => entry.id === order.id, order);
  }

  /** Deletes an order if present. */
  deleteOrder(id: string): void {
    removeWhere(this.orders, (order) => order.id === id);
  }
}
