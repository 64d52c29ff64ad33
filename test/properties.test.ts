/**
 * Properties, with random inputs (fast-check):
 * - every payload the gateway sends, encoded as JSON, XML or a form and decoded again (with the
 *   gateway's decoders, and the emulator's form reader), normalises back to itself, int64 ids
 *   exact; the decoders fail only with a DecodeError, whatever they are given;
 * - random well-formed GraphQL documents built from the schema, sent to a running gateway, get
 *   an answer below 500 in which every error has a code, and the gateway keeps answering.
 * Runs are bounded so that the file takes a few seconds.
 */
import fc from 'fast-check';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { decodeBody as readRequestBody } from '../src/emulator/wire.js';
import { createSchema } from '../src/schema.js';
import {
  DecodeError,
  decodeJson,
  decodeXml,
  encodeForm,
  encodeJson,
  encodeXml,
  normalize,
  type Payload,
  type Shape,
} from '../src/upstream/codec.js';
import { NewPlantShape, NewUserShape, OrderShape, PetListShape, PetShape } from '../src/upstream/payloads.js';
import { ALL_CREDENTIALS, GRAPHQL_POST_HEADERS, useStack } from './helpers/stack.js';

type Format = 'json' | 'xml' | 'form';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Text as it can travel in each format: any Unicode in JSON; in XML and forms, the characters XML 1.0 allows (no other
 * control characters, and no CR, which XML turns into LF).
 */
function text(format: Format): fc.Arbitrary<string> {
  if (format === 'json') return fc.string({ unit: 'binary', maxLength: 12 });
  return fc.string({
    unit: fc.oneof(
      fc.constantFrom('\t', '\n', ' ', '&', '<', '>', '"', "'", '[', ']', '=', '%', '+'),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
    ),
    maxLength: 12,
  });
}

/** Random values of a payload shape. */
function valueOf(shape: Shape, format: Format): fc.Arbitrary<unknown> {
  switch (shape.kind) {
    case 'int64':
      return fc
        .oneof(fc.constantFrom(INT64_MIN, INT64_MAX, 0n, 2n ** 53n + 1n), fc.bigInt({ min: INT64_MIN, max: INT64_MAX }))
        .map(String);
    case 'int32':
      return fc.integer();
    case 'string':
      return text(format);
    case 'boolean':
      return fc.boolean();
    case 'datetime':
      return fc
        .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
        .map((date) => date.toISOString());
    case 'object':
      return fc.record(
        Object.fromEntries(Object.entries(shape.fields).map(([name, field]) => [name, valueOf(field, format)])),
        { requiredKeys: [] },
      );
    case 'list':
      return fc.array(valueOf(shape.of, format), { maxLength: 4 });
  }
}

/**
 * Whether a value leaves a trace in an XML or form body. XML writes every list item and field,
 * but an empty list or object is an empty element, which reads as absent. A form writes one
 * `key=value` pair per scalar: an empty list or object, or one holding only such, writes nothing.
 */
function written(shape: Shape, value: unknown, format: 'xml' | 'form'): boolean {
  if (shape.kind === 'list')
    return (value as unknown[]).some((item) => format === 'xml' || written(shape.of, item, format));
  if (shape.kind !== 'object') return true;
  return Object.entries(shape.fields).some(([name, field]) => {
    const item = (value as Record<string, unknown>)[name];
    return item !== undefined && (format === 'xml' || written(field, item, format));
  });
}

/**
 * What a value reads back as, by the rules the codec documents: an empty string field is absent;
 * XML trims text; what XML or a form cannot write (see {@link written}) is absent, and a form drops
 * an empty object from a list.
 */
function readBack(shape: Shape, value: unknown, format: Format): unknown {
  switch (shape.kind) {
    case 'string':
      return format === 'xml' ? (value as string).trim() : value;
    case 'object': {
      const result: Record<string, unknown> = {};
      for (const [name, field] of Object.entries(shape.fields)) {
        const item = (value as Record<string, unknown>)[name];
        if (item === undefined || (format !== 'json' && !written(field, item, format))) continue;
        const read = readBack(field, item, format);
        if (read !== '') result[name] = read;
      }
      return result;
    }
    case 'list': {
      const items =
        format === 'form'
          ? (value as unknown[]).filter((item) => written(shape.of, item, format))
          : (value as unknown[]);
      return items.map((item) => readBack(shape.of, item, format));
    }
    default:
      return value;
  }
}

type ObjectShape = Shape & { kind: 'object' };

function roundTrip(shape: ObjectShape, value: unknown, format: Format): unknown {
  const payload = value as Payload<ObjectShape>;
  if (format === 'json') return normalize(shape, decodeJson(encodeJson(shape, payload)));
  if (format === 'xml') return normalize(shape, decodeXml(encodeXml(shape, payload)));
  return normalize(
    shape,
    readRequestBody(Buffer.from(encodeForm(shape, payload)), 'application/x-www-form-urlencoded', ['form']),
  );
}

const PAYLOADS: Record<string, ObjectShape> = {
  Pet: PetShape,
  Order: OrderShape,
  User: NewUserShape,
  Plant: NewPlantShape,
};

describe('codec round trips', () => {
  describe.each(['json', 'xml', 'form'] as const)('%s', (format) => {
    it.each(Object.keys(PAYLOADS))('a random %s reads back as itself', (name) => {
      const shape = PAYLOADS[name];
      if (!shape) throw new Error(`no shape ${name}`);
      fc.assert(
        fc.property(valueOf(shape, format), (value) => {
          // A form body with nothing in it is no payload at all (the upstream answers that nothing was sent).
          fc.pre(format !== 'form' || written(shape, value, format));
          expect(roundTrip(shape, value, format)).toEqual(readBack(shape, value, format));
        }),
        { numRuns: 150 },
      );
    });
  });

  it('keeps every int64 exact through JSON, including the ones a double would round', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), (id) => {
        const decoded = normalize(PetShape, decodeJson(encodeJson(PetShape, { id: String(id), name: 'x' })));
        expect(decoded.id).toBe(id.toString());
      }),
      { numRuns: 300 },
    );
  });

  it('reads a list of pets back in JSON', () => {
    fc.assert(
      fc.property(valueOf(PetListShape, 'json'), (pets) => {
        expect(
          normalize(PetListShape, decodeJson(encodeJson(PetListShape, pets as Payload<typeof PetListShape>))),
        ).toEqual(readBack(PetListShape, pets, 'json'));
      }),
      { numRuns: 100 },
    );
  });
});

describe('decoders given anything', () => {
  const onlyDecodeErrors = (read: () => unknown) => {
    try {
      read();
    } catch (error) {
      expect(error).toBeInstanceOf(DecodeError);
    }
  };

  it('decodeJson and decodeXml either read a text or fail with a DecodeError', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary' }),
          fc.json(),
          fc.constantFrom('<a><b>1</b></a>', '<?xml version="1.0"?>', '<a>', '{"id": 99999999999999999999}'),
        ),
        (input) => {
          onlyDecodeErrors(() => decodeJson(input));
          onlyDecodeErrors(() => decodeXml(input));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('normalize either gives a payload or fails with a DecodeError, whatever the value', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), valueOf(PetShape, 'json')), (input) => {
        onlyDecodeErrors(() => normalize(PetShape, input));
        onlyDecodeErrors(() => normalize(PetListShape, input));
      }),
      { numRuns: 300 },
    );
  });
});

describe('random GraphQL documents through the gateway', () => {
  const stack = useStack();
  const schema = createSchema();

  /**
   * A GraphQL literal of an input type: sometimes valid, sometimes not (bad ids, unknown enum values,
   * overflowing Ints).
   */
  function literal(type: GraphQLInputType, depth = 0): fc.Arbitrary<string> {
    if (isNonNullType(type)) return literal(type.ofType, depth);
    if (isListType(type))
      return fc.array(literal(type.ofType, depth + 1), { maxLength: 4 }).map((items) => `[${items.join(', ')}]`);
    if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((value) => value.name), 'ADOPTED');
    if (isInputObjectType(type)) {
      const fields = Object.values(type.getFields());
      if (depth > 2) return fc.constant('{}');
      return fc
        .tuple(
          ...fields.map((field) =>
            fc.option(literal(field.type, depth + 1), { nil: undefined, freq: isNonNullType(field.type) ? 10 : 2 }),
          ),
        )
        .map(
          (values) =>
            `{ ${fields.flatMap((field, index) => (values[index] === undefined ? [] : [`${field.name}: ${values[index]}`])).join(', ')} }`,
        );
    }
    switch (type.name) {
      case 'ID':
        return fc.oneof(
          fc.integer({ min: -3, max: 15 }).map(String),
          fc.bigInt({ min: INT64_MIN, max: INT64_MAX }).map((id) => `"${id}"`),
          fc.constantFrom('"9223372036854775808"', '"-0"', '"1e3"', '" 1"', '""'),
          fc.string({ maxLength: 6 }).map((value) => JSON.stringify(value)),
        );
      case 'Int':
        return fc.oneof(fc.integer().map(String), fc.constant('99999999999'));
      case 'Boolean':
        return fc.boolean().map(String);
      case 'DateTime':
        return fc.oneof(
          fc
            .date({ noInvalidDate: true, min: new Date(0), max: new Date('2100-01-01') })
            .map((date) => `"${date.toISOString()}"`),
          fc.string({ maxLength: 10 }).map((value) => JSON.stringify(value)),
        );
      case '_Any':
        return fc.oneof(
          fc.constantFrom(
            '{ __typename: "Pet", id: "1" }',
            '{ __typename: "Order", id: 2 }',
            '{ __typename: "User", username: "user1" }',
            '{ __typename: "Nope" }',
            '"x"',
          ),
        );
      default:
        // String, File and anything else: a string literal.
        return fc.string({ maxLength: 10 }).map((value) => JSON.stringify(value));
    }
  }

  /** The arguments of a field: the required ones always, the others sometimes. */
  function argumentsOf(field: GraphQLField<unknown, unknown>): fc.Arbitrary<string> {
    if (field.args.length === 0) return fc.constant('');
    return fc
      .tuple(
        ...field.args.map((arg) =>
          fc.option(literal(arg.type), { nil: undefined, freq: isNonNullType(arg.type) ? 20 : 2 }),
        ),
      )
      .map((values) => {
        const given = field.args.flatMap((arg, index) =>
          values[index] === undefined ? [] : [`${arg.name}: ${values[index]}`],
        );
        return given.length === 0 ? '' : `(${given.join(', ')})`;
      });
  }

  /** A selection set on a type: a few of its fields, with arguments and, for objects, their own selections. */
  function selectionOf(type: GraphQLNamedType, depth: number): fc.Arbitrary<string> {
    if (isLeafType(type)) return fc.constant('');
    if (isUnionType(type)) {
      return fc
        .subarray([...type.getTypes()], { minLength: 1 })
        .chain((members) =>
          fc.tuple(
            ...members.map((member) => selectionOf(member, depth + 1).map((inner) => `... on ${member.name} ${inner}`)),
          ),
        )
        .map((parts) => `{ __typename ${parts.join(' ')} }`);
    }
    if (!isObjectType(type) || depth > 3) return fc.constant('{ __typename }');
    return fieldsOf(type, depth).map((fields) => `{ ${fields.join(' ')} }`);
  }

  function fieldsOf(type: GraphQLObjectType, depth: number): fc.Arbitrary<string[]> {
    const fields = Object.values(type.getFields());
    return fc
      .subarray(fields, { minLength: 1, maxLength: Math.min(4, fields.length) })
      .chain((chosen) =>
        fc.tuple(
          ...chosen.map((field, index) =>
            fc
              .tuple(argumentsOf(field), selectionOf(getNamedType(field.type), depth + 1))
              .map(([args, selection]) => `f${index}: ${field.name}${args} ${selection}`),
          ),
        ),
      );
  }

  const queryType = schema.getQueryType();
  const mutationType = schema.getMutationType();
  if (!queryType || !mutationType) throw new Error('the schema has no Query or Mutation type');
  const documents = fc.oneof(
    { weight: 3, arbitrary: fieldsOf(queryType, 0).map((fields) => `query { ${fields.join(' ')} }`) },
    { weight: 1, arbitrary: fieldsOf(mutationType, 0).map((fields) => `mutation { ${fields.join(' ')} }`) },
  );

  it('answer below 500, every error with a code, and the gateway keeps answering', async () => {
    await fc.assert(
      fc.asyncProperty(documents, async (document) => {
        const response = await fetch(stack.url, {
          method: 'POST',
          headers: {
            ...GRAPHQL_POST_HEADERS,
            ...ALL_CREDENTIALS,
          },
          body: JSON.stringify({ query: document }),
        });
        const body = (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: unknown } }[] };

        expect(response.status).toBeLessThan(500);
        expect('data' in body || 'errors' in body).toBe(true);
        for (const error of body.errors ?? []) expect(typeof error.extensions?.code).toBe('string');
        for (const error of body.errors ?? []) expect(error.extensions?.code).not.toBe('INTERNAL_SERVER_ERROR');
      }),
      { numRuns: 150 },
    );

    // Random mutations may have deleted pet 1.
    stack.emulator.reset();
    expect(await stack.gql('{ pet(id: 1) { id } }', {}, ALL_CREDENTIALS)).toEqual({
      status: 200,
      data: { pet: { id: '1' } },
    });
  });
});
