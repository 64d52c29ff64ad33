/**
 * The wire formats (`src/upstream/codec.ts`): int64-safe JSON, XML as the reference server
 * writes it, forms, and the shape-driven normalisation that turns any of them into one payload.
 */
import qs from 'qs';
import { describe, expect, it } from 'vitest';
import {
  decodeJson,
  decodeXml,
  DecodeError,
  encodeForm,
  encodeJson,
  encodeXml,
  normalize,
  toInt64,
} from '../src/upstream/codec.js';
import { OrderShape, PetListShape, PetShape, type PetPayload } from '../src/upstream/payloads.js';

const MAX_INT64 = '9223372036854775807';
const MIN_INT64 = '-9223372036854775808';

/** A pet with every kind of field: int64 ids, a nested object, lists of strings and of objects, text to escape. */
const PET: PetPayload = {
  id: MAX_INT64,
  category: { id: '2', name: 'Cats' },
  name: 'Tom & Jerry',
  photoUrls: ['url1', 'url2'],
  tags: [
    { id: '1', name: 'tag1' },
    { id: '2', name: 'tag2' },
  ],
  status: 'available',
};

describe('decodeJson', () => {
  it('keeps an integer beyond 2^53 exact, as its decimal text', () => {
    expect(decodeJson(`{"id":${MAX_INT64},"quantity":7}`)).toEqual({ id: MAX_INT64, quantity: 7 });
  });

  it('reads small values as numbers, including a long but safe integer and a fraction', () => {
    expect(decodeJson('{"id":1234567890123456,"quantity":7,"price":1.5}')).toEqual({
      id: 1234567890123456,
      quantity: 7,
      price: 1.5,
    });
  });

  it('rejects text that is not JSON with a DecodeError', () => {
    expect(() => decodeJson('{"id": 1, ')).toThrow(new DecodeError('body is not valid JSON'));
  });
});

describe('normalize', () => {
  it('turns the single tag and photoUrl of an XML pet into lists', () => {
    const raw = decodeXml(
      '<pet><id>1</id><name>Cat 1</name><photoUrls><photoUrl>url1</photoUrl></photoUrls><tags><tag><id>3</id><name>tag3</name></tag></tags></pet>',
    );

    expect(normalize(PetShape, raw)).toEqual({
      id: '1',
      name: 'Cat 1',
      photoUrls: ['url1'],
      tags: [{ id: '3', name: 'tag3' }],
    });
  });

  it('unwraps an XML <ArrayList> of one item into a list of one pet', () => {
    const raw = decodeXml('<ArrayList><item><id>1</id><name>Cat 1</name></item></ArrayList>');

    expect(normalize(PetListShape, raw)).toEqual([{ id: '1', name: 'Cat 1' }]);
  });

  it('unwraps an XML <ArrayList> of several items into a list of pets, in order', () => {
    const raw = decodeXml(
      '<ArrayList><item><id>2</id><name>Cat 2</name></item><item><id>1</id><name>Cat 1</name></item></ArrayList>',
    );

    expect(normalize(PetListShape, raw)).toEqual([
      { id: '2', name: 'Cat 2' },
      { id: '1', name: 'Cat 1' },
    ]);
  });

  it('reads an empty XML list as an empty list', () => {
    expect(normalize(PetListShape, decodeXml('<ArrayList/>'))).toEqual([]);
  });

  it('converts epoch milliseconds (the reference server XML dates) to ISO date-times', () => {
    const raw = decodeXml('<Order><id>1</id><shipDate>1700000000000</shipDate></Order>');

    expect(normalize(OrderShape, raw)).toEqual({ id: '1', shipDate: '2023-11-14T22:13:20.000Z' });
  });

  it('normalises an ISO date-time with an offset to UTC', () => {
    expect(normalize(OrderShape, { shipDate: '2025-03-20T12:00:00+01:00' })).toEqual({
      shipDate: '2025-03-20T11:00:00.000Z',
    });
  });

  it("parses the XML texts 'true' and 'false' as booleans", () => {
    expect(normalize(OrderShape, decodeXml('<Order><complete>true</complete></Order>'))).toEqual({ complete: true });
    expect(normalize(OrderShape, decodeXml('<Order><complete>false</complete></Order>'))).toEqual({ complete: false });
  });

  it('drops fields the shape does not name, such as a password echoed with a pet', () => {
    expect(normalize(PetShape, { id: 1, name: 'Cat 1', password: 'hunter2', owner: { id: 9 } })).toEqual({
      id: '1',
      name: 'Cat 1',
    });
  });

  it('leaves out absent, null and empty values', () => {
    expect(normalize(PetShape, { id: 1, name: '', category: null, status: undefined })).toEqual({ id: '1' });
  });

  it('rejects a non-integer id with a DecodeError naming the field', () => {
    expect(() => normalize(PetShape, { id: 1.5, name: 'Cat 1' })).toThrow(new DecodeError('$.id: expected an int64'));
  });

  it('names the place of a bad value inside a list', () => {
    expect(() => normalize(PetListShape, [{ id: 1 }, { id: 2, tags: [{ id: 'abc' }] }])).toThrow(
      new DecodeError('$[1].tags[0].id: expected an int64'),
    );
  });
});

describe('encoders', () => {
  it('encodeJson writes int64 ids as exact JSON integers', () => {
    expect(encodeJson(PetShape, PET)).toBe(
      `{"id":${MAX_INT64},"category":{"id":2,"name":"Cats"},"name":"Tom & Jerry","photoUrls":["url1","url2"],"tags":[{"id":1,"name":"tag1"},{"id":2,"name":"tag2"}],"status":"available"}`,
    );
  });

  it('encodeXml writes the pet store XML: root <pet>, wrapped lists, escaped text', () => {
    expect(encodeXml(PetShape, PET)).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>' +
        `<pet><id>${MAX_INT64}</id><category><id>2</id><name>Cats</name></category><name>Tom &amp; Jerry</name>` +
        '<photoUrls><photoUrl>url1</photoUrl><photoUrl>url2</photoUrl></photoUrls>' +
        '<tags><tag><id>1</id><name>tag1</name></tag><tag><id>2</id><name>tag2</name></tag></tags>' +
        '<status>available</status></pet>',
    );
  });

  it('encodeForm writes bracketed keys, percent-encoded, with indexed lists', () => {
    expect(encodeForm(PetShape, PET)).toBe(
      `id=${MAX_INT64}&category%5Bid%5D=2&category%5Bname%5D=Cats&name=Tom%20%26%20Jerry` +
        '&photoUrls%5B0%5D=url1&photoUrls%5B1%5D=url2' +
        '&tags%5B0%5D%5Bid%5D=1&tags%5B0%5D%5Bname%5D=tag1&tags%5B1%5D%5Bid%5D=2&tags%5B1%5D%5Bname%5D=tag2&status=available',
    );
  });
});

describe('round trips: encode, then decode and normalize, gives the same pet', () => {
  it('through JSON', () => {
    expect(normalize(PetShape, decodeJson(encodeJson(PetShape, PET)))).toEqual(PET);
  });

  it('through XML', () => {
    expect(normalize(PetShape, decodeXml(encodeXml(PetShape, PET)))).toEqual(PET);
  });

  it('through a form', () => {
    expect(normalize(PetShape, qs.parse(encodeForm(PetShape, PET)))).toEqual(PET);
  });
});

describe('toInt64', () => {
  it.each([
    ['the largest int64', MAX_INT64, MAX_INT64],
    ['the smallest int64', MIN_INT64, MIN_INT64],
    ['zero', '0', '0'],
    ['a safe JS number', 42, '42'],
    ['leading zeros, canonicalised', '007', '7'],
    ['minus zero, canonicalised', '-0', '0'],
  ])('accepts %s', (_, value, canonical) => {
    expect(toInt64(value)).toBe(canonical);
  });

  it.each([
    ['one past the largest', '9223372036854775808'],
    ['one below the smallest', '-9223372036854775809'],
    ['a fraction', '1.5'],
    ['a fractional number', 1.5],
    ['an exponent', '1e3'],
    ['a plus sign', '+1'],
    ['spaces', ' 1'],
    ['an empty string', ''],
    ['letters', 'abc'],
    ['a number beyond 2^53, already rounded', 2 ** 53 + 2],
    ['a boolean', true],
    ['null', null],
  ])('rejects %s', (_, value) => {
    expect(toInt64(value)).toBeUndefined();
  });
});
