/**
 * Runs the emulator on its own (`npm run emulator`), for poking at the REST
 * areas by hand or pointing a separately started gateway at them.
 * Settings (EMULATOR_HOST, EMULATOR_PORT) come from src/config/ like the gateway's.
 */
import { loadEmulatorConfig } from '../config/index.js';
import { startEmulator } from './server.js';

async function main(): Promise<void> {
  const { host, port } = loadEmulatorConfig();
  const emulator = await startEmulator({ host, port, recordRequests: false });
  console.log(`pet store emulator: ${emulator.petstoreUrl}`);
  console.log(`plant emulator:     ${emulator.plantsUrl}/plants`);

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal} received, stopping the emulator`);
    emulator.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('emulator: failed to stop cleanly', error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
