/**
 * Start-up leaves garbage behind: compiling the bundle, building the schema and the settings
 * allocate far more than the gateway keeps, and on Node.js 26 the young generation grows to its
 * largest (two semi-spaces of 8 MB, `--max-semi-space-size=8`) while it does. A process that then
 * serves nothing, or little, keeps all of it resident until enough allocation triggers a
 * collection. One full collection once the gateway listens gives it back: 115 MB idle became
 * 102 MB in a process that answered one request (docs/decisions/0005-heap-settings.md). Under load
 * the young generation grows again as it needs.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's `gc` function (its gc extension): the options a runtime does not know are ignored. */
type CollectGarbage = (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async'; flavor?: string }) => void;

/** How long after the gateway listens the collection runs: after the first requests of a start, on a quiet moment. */
const START_COLLECTION_DELAY_MS = 1000;

/** Schedules {@link collectStartGarbage} {@link START_COLLECTION_DELAY_MS} after now; it never keeps the process alive. */
export function collectStartGarbageSoon(): void {
  setTimeout(collectStartGarbage, START_COLLECTION_DELAY_MS).unref();
}

/**
 * Runs one full garbage collection that also shrinks the heap's spaces (V8's "last resort"
 * collection), through a `gc` function taken from a new context: the process's own global gets no
 * `gc`, so no module can call it later. Does nothing where the runtime has no such function.
 */
export function collectStartGarbage(): void {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    if (typeof gc === 'function') (gc as CollectGarbage)({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } catch {
    // No gc extension in this runtime: the memory is given back by the collections load brings.
  }
}
