/**
 * The table behind the answers in flight, the shared upstream calls and the cluster's awaited
 * replies (`src/short-lived-table.ts`): what a Map would do for those callers, whatever the key.
 */
import { describe, expect, it } from 'vitest';
import { ShortLivedTable } from '../src/short-lived-table.js';

describe('ShortLivedTable', () => {
  it('finds, replaces and removes entries by key, counting them', () => {
    const table = new ShortLivedTable<string>();
    table.set('GET /pet/1', 'first');
    table.set('GET /pet/2', 'second');
    table.set('GET /pet/1', 'replaced');

    expect(table.size).toBe(2);
    expect(table.get('GET /pet/1')).toBe('replaced');
    expect(table.delete('GET /pet/1')).toBe(true);
    expect(table.delete('GET /pet/1')).toBe(false);
    expect(table.get('GET /pet/1')).toBeUndefined();
    expect(table.size).toBe(1);
  });

  it('keeps keys that are numbers or names objects give meaning to as plain keys, in the order they were added', () => {
    const table = new ShortLivedTable<number>();
    for (const [index, key] of ['2', '1', '__proto__', 'constructor', 'toString', ''].entries()) table.set(key, index);

    expect(table.entries()).toEqual([
      ['2', 0],
      ['1', 1],
      ['__proto__', 2],
      ['constructor', 3],
      ['toString', 4],
      ['', 5],
    ]);
    expect(table.values()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(table.get('hasOwnProperty')).toBeUndefined();
    expect(table.delete('valueOf')).toBe(false);
    expect(table.size).toBe(6);
  });

  it('stays exact over many entries that come and go', () => {
    const table = new ShortLivedTable<number>();
    for (let index = 0; index < 10_000; index += 1) {
      table.set(String(index), index);
      if (index >= 10) table.delete(String(index - 10));
    }

    expect(table.size).toBe(10);
    expect(table.values()).toEqual([9990, 9991, 9992, 9993, 9994, 9995, 9996, 9997, 9998, 9999]);
  });
});
