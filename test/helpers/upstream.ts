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

/** True where the upstream refuses a call without the credential the operation declares (the reference server does not check). */
export const ENFORCES_CREDENTIALS = UPSTREAM === 'emulator';

/** Starts this run's upstream on 127.0.0.1, port 0. */
export function startUpstream(options: { latencyMs?: number } = {}): Promise<Emulator> {
  return UPSTREAM === 'reference' ? startReferencePetstore(options) : startEmulator(options);
}
