/**
 * The benchmark's upstream, run as its own process so that it never shares an event loop with
 * the load generator or a contender: the embedded emulator with a fixed added latency per
 * request and no request log (its memory must not grow with the load).
 *
 * Usage: tsx bench/emulator.ts <latencyMs>. Prints one JSON line `{ petstoreUrl, plantsUrl }`
 * when listening; stops on SIGTERM.
 */
import { startEmulator } from '../src/emulator/server.js';

const latencyMs = Number(process.argv[2] ?? '0');
const emulator = await startEmulator({ latencyMs, recordRequests: false });
process.stdout.write(`${JSON.stringify({ petstoreUrl: emulator.petstoreUrl, plantsUrl: emulator.plantsUrl })}\n`);
process.on('SIGTERM', () => {
  void emulator.close().then(() => process.exit(0));
});
