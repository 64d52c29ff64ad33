/**
 * `npm run check:upstream -- <url-or-file> [--area petstore|plants] [--json]`: compares an
 * upstream's OpenAPI document with the one the gateway is built on (see src/contract/cli.ts and
 * docs/upstream-safety.md). Exit code 0: no breaking change; 1: a breaking change; 2: a usage or
 * input error.
 */
import { checkUpstream } from '../src/contract/cli.js';

process.exitCode = await checkUpstream(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
