/**
 * The runtime (`src/runtime.ts`): what the start-up banner says of the Node.js it runs on, and one
 * list of supported lines that package.json's `engines`, `.nvmrc`, `.node-version`, the image and
 * the Node.js CI fetches all follow.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { enginesRange, NODE_LINES, runtimeStatus, SHIPPED_NODE_LINE } from '../src/runtime.js';
import { PROJECT_ROOT } from './helpers/process.js';

const day = (date: string) => new Date(`${date}T12:00:00Z`);
const read = (path: string) => readFileSync(`${PROJECT_ROOT}${path}`, 'utf8');

describe('the start-up banner names the runtime', () => {
  it('names a supported release and the last day of its line', () => {
    expect(runtimeStatus('26.12.1', day('2026-11-27'))).toEqual({
      line: 'Runtime: Node.js 26.12.1 (supported until 2029-04-30)',
      warning: undefined,
    });
    expect(runtimeStatus('v22.13.0', day('2026-11-27')).line).toBe(
      'Runtime: Node.js 22.13.0 (supported until 2027-04-30)',
    );
  });

  it('still counts a line supported on its end-of-life day', () => {
    expect(runtimeStatus('20.20.2', day('2026-04-30')).warning).toBeUndefined();
  });

  it('warns, on the banner line and in the log, when the line is past its end of life', () => {
    expect(runtimeStatus('20.20.2', day('2026-05-01'))).toEqual({
      line: 'Runtime: Node.js 20.20.2, PAST ITS END OF LIFE (2026-04-30): no security fixes; run Node.js 26, as the container image does',
      warning:
        'Node.js 20.20.2 is past its end of life (2026-04-30): it gets no security fixes from the Node.js project; run Node.js 26, as the container image does',
    });
    expect(runtimeStatus('24.11.0', day('2028-05-01')).warning).toMatch(
      /^Node\.js 24\.11\.0 is past its end of life \(2028-04-30\)/,
    );
  });

  it.each([
    ['an odd line', '25.9.0'],
    ['a line newer than those it was tested on', '28.0.0'],
    ['a release older than its line needs', '20.18.3'],
  ])('warns on %s', (_, version) => {
    expect(runtimeStatus(version, day('2026-11-27'))).toEqual({
      line: `Runtime: Node.js ${version}, NOT SUPPORTED (lines 20 from 20.19, 22 from 22.13, 24, 26); run Node.js 26, as the container image does`,
      warning: `Node.js ${version} is not a release the gateway supports (lines 20 from 20.19, 22 from 22.13, 24, 26); run Node.js 26, as the container image does`,
    });
  });
});

describe('the supported lines', () => {
  it('are what package.json engines names, line by line', () => {
    const packageJson = JSON.parse(read('package.json')) as { engines: { node: string } };

    expect(packageJson.engines.node).toBe(enginesRange());
    expect(enginesRange()).toBe('^20.19.0 || ^22.13.0 || ^24.0.0 || ^26.0.0');
  });

  it('ship the line that .nvmrc and .node-version name, the newest supported', () => {
    expect(read('.nvmrc').trim()).toBe(String(SHIPPED_NODE_LINE));
    expect(read('.node-version').trim()).toBe(String(SHIPPED_NODE_LINE));
    expect(NODE_LINES.at(-1)?.major).toBe(SHIPPED_NODE_LINE);
  });

  it('start at the oldest, which the bundle is compiled for and whose Node.js types the code is checked against', () => {
    const oldest = NODE_LINES[0]?.major;
    const packageJson = JSON.parse(read('package.json')) as { devDependencies: Record<string, string> };

    expect(read('scripts/build.ts')).toMatch(new RegExp(`\\btarget: 'node${oldest}'`));
    expect(packageJson.devDependencies['@types/node']).toMatch(new RegExp(`^\\^${oldest}\\.`));
  });

  it('are tested in CI on the shipped line, from a Node.js pinned by version and integrity', () => {
    const script = read('scripts/fetch-node.sh');
    const [, version = ''] = /^NODE_VERSION=(\S+)$/m.exec(script) ?? [];
    const [, integrity = ''] = /^NODE_INTEGRITY=(\S+)$/m.exec(script) ?? [];

    expect(version.split('.')[0]).toBe(String(SHIPPED_NODE_LINE));
    expect(integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
    expect(read('.ci/run')).toMatch(/scripts\/fetch-node\.sh/);
  });
});
