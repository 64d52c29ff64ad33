/**
 * Vitest's global setup, run once before any test file: the production build (`npm run build`'s
 * script, which builds only when an input of the build changed, into `dist/`). The tests that
 * start the gateway as a process (`startGateway` in helpers/process.ts) run `dist/main.js` with
 * plain node, as `npm start` does, instead of compiling `src/` under tsx at each start: a start
 * under tsx cost about four times the CPU on this project's 2-core machines, and those tests start
 * about sixty.
 */
import { execFileSync } from 'node:child_process';
import { PROJECT_ROOT } from './helpers/process.js';

export default function buildOnce(): void {
  execFileSync(process.execPath, ['scripts/build-if-changed.js', 'scripts/build.ts', '--quiet'], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}
