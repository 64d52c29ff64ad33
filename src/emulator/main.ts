/**
 * Runs the emulator on its own (`npm run emulator`), for poking at the REST
 * areas by hand or pointing a separately started gateway at them.
 * This is the only emulator file that reads the environment.
 */
import { startEmulator } from './server.js';

function readPort(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 4010;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`EMULATOR_PORT must be an integer between 0 and 65535, got "${value}"`);
  }
  return port;
}

async function main(): Promise<void> {
  const emulator = await startEmulator({
    host: process.env.EMULATOR_HOST?.trim() || '127.0.0.1',
    port: readPort(process.env.EMULATOR_PORT),
    recordRequests: false,
  });
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
