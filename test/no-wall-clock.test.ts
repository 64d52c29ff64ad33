/**
 * Tests assert events, not wall-clock thresholds (issue 20). A test that compares an elapsed
 * time with a fixed limit fails on a slow machine (a 2-core CI runner under load) however right
 * the code is, and a lower bound proves little more than that a timer fired. A test waits instead
 * for what it can observe (the upstream received the request, a log line appeared, a socket
 * closed, one promise settled before another), or moves a fake clock itself: see
 * `test/helpers/clock.ts` (`until`, `tracked`, `fakeClock`).
 *
 * This file scans every test source (test/**, this file aside) for the shapes such a comparison
 * takes: a clock read (`performance.now()`, `Date.now()`, `process.hrtime()`, `new Date().getTime()`)
 * subtracted, directly or through the name it was kept in, and an `expect` on an elapsed time.
 * A clock read used as a value (a timestamp an answer must lie between, a polling helper's
 * deadline) is not a comparison of elapsed time, and passes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const TEST_DIR = fileURLToPath(new URL('.', import.meta.url));
const THIS_FILE = 'no-wall-clock.test.ts';

const CLOCK_READ = String.raw`(?:performance\.now\(\)|Date\.now\(\)|process\.hrtime(?:\.bigint)?\(\)|new Date\(\)\.getTime\(\))`;
/** A clock read as one side of a subtraction (not `--`, `-=`, nor a negative number's sign after `+`). */
const CLOCK_SUBTRACTED = new RegExp(String.raw`${CLOCK_READ}\s*-(?![-=])|(?<![-+])-\s*\(?\s*${CLOCK_READ}`);
/** A name a clock read is kept in: `const started = performance.now()`. */
const CLOCK_KEPT = new RegExp(String.raw`\b(?:const|let|var)\s+(\w+)\s*=\s*${CLOCK_READ}`, 'g');
/** An expectation about an elapsed time, by the names tests give one. */
const ELAPSED_EXPECTED = [
  /\bexpect\(.*\belapsed/i,
  /\bexpect\(.*\b\w*(?:After|Took|Elapsed|Duration|Latency)Ms\b.*\)\s*\.(?:not\.)?toBe(?:Less|Greater)Than/i,
];

/** Where `source` compares an elapsed time: each finding as `<line number>: <line>`. */
function wallClockComparisons(source: string): string[] {
  const kept = [...source.matchAll(CLOCK_KEPT)].map(([, name = '']) => name);
  const keptSubtracted = kept.map((name) => new RegExp(String.raw`\b${name}\s*-(?![-=])|(?<![-+])-\s*${name}\b`));
  const patterns = [CLOCK_SUBTRACTED, ...keptSubtracted, ...ELAPSED_EXPECTED];
  return source
    .split('\n')
    .flatMap((line, index) => (patterns.some((pattern) => pattern.test(line)) ? [`${index + 1}: ${line.trim()}`] : []));
}

/** Every TypeScript source under test/, relative to it, this file aside. */
function testSources(): string[] {
  return readdirSync(TEST_DIR, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts') && path !== THIS_FILE && !path.split('/').includes('node_modules'))
    .sort();
}

describe('the test sources', () => {
  it('compare no elapsed time with a fixed limit: they wait for events, or move a fake clock', () => {
    const findings = testSources().flatMap((path) =>
      wallClockComparisons(readFileSync(`${TEST_DIR}${path}`, 'utf8')).map((finding) => `test/${path}:${finding}`),
    );

    expect(findings).toEqual([]);
  });

  it('are all scanned: the test files and their helpers', () => {
    const sources = testSources();

    expect(sources).toContain('upstream-failures.test.ts');
    expect(sources).toContain('helpers/clock.ts');
    expect(sources).not.toContain(THIS_FILE);
  });
});

describe('the scan', () => {
  it.each([
    [
      'an elapsed time against a limit',
      'const started = performance.now();\nawait work();\nexpect(performance.now() - started).toBeLessThan(3000);',
    ],
    ['an elapsed time kept in a name', 'const t0 = Date.now();\nawait work();\nconst took = Date.now() - t0;'],
    ['a clock read subtracted from a limit', 'await sleep(300 - (performance.now() - started));'],
    ['a name that a clock read was kept in, subtracted', 'const asked = performance.now();\nreport(end - asked);'],
    ['a high-resolution clock', 'const at = process.hrtime.bigint();\nconst ns = process.hrtime.bigint() - at;'],
    ['an expectation on `elapsed`', 'expect(elapsed).toBeLessThan(600);'],
    ['an expectation on a duration name', 'expect(outcome.afterMs).toBeGreaterThanOrEqual(895);'],
  ])('finds %s', (_, source) => {
    expect(wallClockComparisons(source)).not.toEqual([]);
  });

  it.each([
    [
      "a polling helper's deadline",
      'const deadline = Date.now() + timeoutMs;\nif (Date.now() > deadline) throw new Error("timed out");',
    ],
    [
      'a timestamp an answer must lie between',
      'const before = Date.now();\nawait placeOrder();\nconst after = Date.now();\nexpect(shipDate(before, after)).toBe(true);',
    ],
    ['a duration that is only there', "expect(line['durationMs']).toEqual(expect.any(Number));"],
    ["differences on the test's own clock", 'expect(arrivals.map((at) => at - first)).toEqual([0, 75, 225]);'],
    ['a date in the future', 'const later = new Date(Date.now() + 60_000);'],
  ])('passes %s', (_, source) => {
    expect(wallClockComparisons(source)).toEqual([]);
  });
});
