/**
 * Which upstream the integration suite runs against. vitest runs the suite twice (see
 * vitest.config.ts): once against the embedded emulator, which follows the interface document,
 * and once against a double of the public reference server, which departs from it (no auth,
 * bare-text errors, one status per call, the Pet as the upload answer, ...). One suite keeps
 * the gateway honest against both.
 */
import { inject } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { startReferencePetstore } from '../fixtures/reference-petstore/server.js';

export type UpstreamKind = 'emulator' | 'reference';

declare module 'vitest' {
  export interface ProvidedContext {
    upstream: UpstreamKind;
  }
}

/** The upstream of this run. */
export const UPSTREAM: UpstreamKind = inject('upstream') ?? 'emulator';

/**
 * True where the upstream refuses a call without the credential the operation declares (the reference
 * server does not check).
 */
export const ENFORCES_CREDENTIALS = UPSTREAM === 'emulator';

/** A seeded pet: every one has photos url1 and url2 and two tags, numbered 1 and 2. */
type SeededPet = {
  id: number;
  category: [id: number, name: string];
  name: string;
  tags: [string, string];
  status?: string;
};

/** A seeded pet as both upstreams write it in JSON (without `status` when it has none). */
export function seededPetJson(pet: SeededPet): Record<string, unknown> {
  return {
    id: pet.id,
    category: { id: pet.category[0], name: pet.category[1] },
    name: pet.name,
    photoUrls: ['url1', 'url2'],
    tags: pet.tags.map((name, index) => ({ id: index + 1, name })),
    ...(pet.status === undefined ? {} : { status: pet.status }),
  };
}

/** A seeded pet as both upstreams write it in XML. */
export function seededPetXml(pet: SeededPet & { status: string }): string {
  const [first, second] = pet.tags;
  return (
    `<Pet><id>${pet.id}</id><category><id>${pet.category[0]}</id><name>${pet.category[1]}</name></category><name>${pet.name}</name>` +
    '<photoUrls><photoUrl>url1</photoUrl><photoUrl>url2</photoUrl></photoUrls>' +
    `<tags><tag><id>1</id><name>${first}</name></tag><tag><id>2</id><name>${second}</name></tag></tags>` +
    `<status>${pet.status}</status></Pet>`
  );
}

/** Starts this run's upstream on 127.0.0.1, port 0. */
export function startUpstream(options: { latencyMs?: number } = {}): Promise<Emulator> {
  return UPSTREAM === 'reference' ? startReferencePetstore(options) : startEmulator(options);
}
