/**
 * The settings of the emulator run alone (`npm run emulator`): its own two, not the gateway's.
 */
import { integer, type Setting, type SettingValues } from './parse.js';

/** The settings of the emulator run alone (`npm run emulator`). */
export const EMULATOR_SETTINGS = [
  {
    key: 'host',
    env: 'EMULATOR_HOST',
    default: '127.0.0.1',
    description: 'interface the emulator listens on',
    parse: (raw: string) => raw,
  },
  {
    key: 'port',
    env: 'EMULATOR_PORT',
    default: '4010',
    description: 'port the emulator listens on',
    parse: integer(0, 65535),
  },
] as const satisfies readonly Setting[];

/**
 * Settings of the emulator run alone (`npm run emulator`): `host` (EMULATOR_HOST, default 127.0.0.1) and `port`
 * (EMULATOR_PORT, default 4010).
 */
export type EmulatorConfig = Readonly<SettingValues<typeof EMULATOR_SETTINGS>>;
