/**
 * The log's stdout is written in batches (src/observability/logger.ts, BatchedLines): lines
 * gather in memory and reach the output as one write, in order, when 64 Ki characters have
 * gathered, when the first line of a batch has waited LOG_FLUSH_MS, or when the log is flushed.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatchedLines, LOG_FLUSH_MS, type BatchOutput } from '../src/observability/logger.js';

/** What the output (sonic-boom) was asked to do, in order. */
function recordingOutput() {
  const calls: string[] = [];
  const output: BatchOutput = {
    write: (text: string) => calls.push(`write ${text}`) > 0,
    flush: (done: (error?: Error) => void) => {
      calls.push('flush');
      done();
    },
    flushSync: () => {
      calls.push('flushSync');
    },
  };
  return { calls, lines: new BatchedLines(output) };
}

const line = (n: number, size = 10) => `${String(n).padStart(size - 1, '0')}\n`;

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the log written in batches', () => {
  it('holds lines until the first of them has waited LOG_FLUSH_MS, then writes them at once, in order', () => {
    const { calls, lines } = recordingOutput();
    lines.write(line(1));
    vi.advanceTimersByTime(LOG_FLUSH_MS / 2);
    lines.write(line(2));

    vi.advanceTimersByTime(LOG_FLUSH_MS / 2 - 1);
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(calls).toEqual([`write ${line(1)}${line(2)}`]);

    vi.advanceTimersByTime(LOG_FLUSH_MS * 4);
    expect(calls).toHaveLength(1);
  });

  it('writes as soon as 64 Ki characters have gathered, in one write, and arms no write for an empty batch', () => {
    const { calls, lines } = recordingOutput();
    const size = 8 * 1024;
    for (let n = 1; n <= 7; n += 1) lines.write(line(n, size));
    expect(calls).toEqual([]);

    lines.write(line(8, size));
    expect(calls).toEqual([`write ${[1, 2, 3, 4, 5, 6, 7, 8].map((n) => line(n, size)).join('')}`]);
    vi.advanceTimersByTime(LOG_FLUSH_MS * 4);
    expect(calls).toHaveLength(1);

    lines.write(line(9));
    vi.advanceTimersByTime(LOG_FLUSH_MS);
    expect(calls).toEqual([expect.stringMatching(/^write /), `write ${line(9)}`]);
  });

  it('writes what it holds before the output is flushed, and calls back once the output is', () => {
    const { calls, lines } = recordingOutput();
    const done = vi.fn();
    lines.write(line(1));
    lines.flush(done);
    lines.write(line(2));
    lines.flushSync();

    expect(calls).toEqual([`write ${line(1)}`, 'flush', `write ${line(2)}`, 'flushSync']);
    expect(done).toHaveBeenCalledOnce();
    vi.advanceTimersByTime(LOG_FLUSH_MS * 4);
    expect(calls).toHaveLength(4);
  });

  it('flushes with nothing held without writing', () => {
    const { calls, lines } = recordingOutput();
    lines.flushSync();
    expect(calls).toEqual(['flushSync']);
  });
});
