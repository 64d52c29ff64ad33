/**
 * Wire formats of the REST areas: JSON (int64-safe), XML and URL-encoded forms.
 *
 * Payloads are described once as a {@link Shape}; the same description drives decoding
 * (normalising whatever the upstream sent into one typed form), encoding into each body
 * format, and the static payload types (`Payload<typeof shape>`). A field the shape does not
 * name is dropped on decode, so an upstream that echoes a secret (a user's password) or adds
 * fields cannot leak them through the graph.
 */
import { XMLBuilder, XMLParser } from 'fast-xml-parser';
import { isSafeNumber, parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';
import qs from 'qs';

/** A scalar field kind. `int64` values are kept as canonical decimal strings end to end. */
type ScalarKind = 'int64' | 'int32' | 'string' | 'boolean' | 'datetime';

/** The description of one field (or of a whole body). */
export type Shape =
  | { readonly kind: ScalarKind }
  | { readonly kind: 'object'; readonly xmlName: string; readonly fields: Readonly<Record<string, Shape>> }
  | { readonly kind: 'list'; readonly of: Shape; readonly xmlItem: string };

type ScalarValue<K extends ScalarKind> = K extends 'int32' ? number : K extends 'boolean' ? boolean : string;

/** The decoded (and encodable) value of a shape: int64 and datetime as strings, every object field optional. */
export type Payload<S extends Shape> = S extends { kind: 'object'; fields: infer F extends Record<string, Shape> }
  ? { [K in keyof F]?: Payload<F[K]> }
  : S extends { kind: 'list'; of: infer I extends Shape }
    ? Payload<I>[]
    : S extends { kind: infer K extends ScalarKind }
      ? ScalarValue<K>
      : never;

/** Shape builders, so that payload descriptions read like the OpenAPI schemas they mirror. */
export const int64 = { kind: 'int64' } as const;
export const int32 = { kind: 'int32' } as const;
export const string = { kind: 'string' } as const;
export const boolean = { kind: 'boolean' } as const;
export const datetime = { kind: 'datetime' } as const;
export function object<const F extends Record<string, Shape>>(xmlName: string, fields: F) {
  return { kind: 'object', xmlName, fields } as const;
}
export function list<const I extends Shape>(of: I, xmlItem: string) {
  return { kind: 'list', of, xmlItem } as const;
}

/** A body that does not match its content type or its shape. */
export class DecodeError extends Error {
  override name = 'DecodeError';
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INTEGER = /^-?\d+$/;

/**
 * The canonical decimal form of an int64, or undefined when `value` is not one.
 * Used for ids from clients (before any upstream call) and from upstreams alike.
 */
export function toInt64(value: unknown): string | undefined {
  // Safe integers (the JSON most upstreams send) are int64s already; no BigInt needed.
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value === 0 ? 0 : value) : undefined;
  const text = value;
  if (typeof text !== 'string' || !INTEGER.test(text) || text.length > 20) return undefined;
  // Up to 15 digits, a string is a safe integer too: its canonical form is its number's.
  if (text.length <= 15) return String(Number(text) || 0);
  const n = BigInt(text);
  return n >= INT64_MIN && n <= INT64_MAX ? n.toString() : undefined;
}

// Sixteen or more digits in a row may be a number JSON.parse would round; only then is the
// slower lossless parser needed. Ids in the seeded data and most real traffic take the fast path.
const MAYBE_UNSAFE_NUMBER = /\d{16}/;

/** Parses JSON keeping integers beyond 2^53 exact (as their decimal text). */
export function decodeJson(text: string): unknown {
  try {
    if (!MAYBE_UNSAFE_NUMBER.test(text)) return JSON.parse(text);
    return parseLossless(text, null, (digits) => (isSafeNumber(digits) ? Number(digits) : digits));
  } catch {
    throw new DecodeError('body is not valid JSON');
  }
}

const xmlParser = new XMLParser({
  ignoreAttributes: true,
  // Keep every value as text: the shape decides what is a number, and int64 stays exact.
  parseTagValue: false,
  trimValues: true,
  processEntities: true,
  htmlEntities: false,
});

/** Parses an XML document and returns the content of its root element, whatever the root is named. */
export function decodeXml(text: string): unknown {
  let document: Record<string, unknown>;
  try {
    document = xmlParser.parse(text, true) as Record<string, unknown>;
  } catch {
    throw new DecodeError('body is not valid XML');
  }
  const roots = Object.keys(document).filter((name) => !name.startsWith('?'));
  if (roots.length !== 1) throw new DecodeError('XML body must have exactly one root element');
  return document[roots[0] as string];
}

/** How a Content-Type says its body is written. */
function mediaType(contentType: string | undefined): 'json' | 'xml' | 'text' {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml')) return 'xml';
  return 'text';
}

/** Decodes a body by its Content-Type: JSON, XML, or anything else as text; an empty body is undefined. */
export function decodeByContentType(text: string, contentType: string | undefined): unknown {
  if (text.trim() === '') return undefined;
  const type = mediaType(contentType);
  return type === 'json' ? decodeJson(text) : type === 'xml' ? decodeXml(text) : text;
}

/**
 * Normalises a decoded JSON or XML value to the shape: numbers from text, single XML items
 * into lists, wrapped XML lists unwrapped, epoch milliseconds into ISO dates. Absent, null
 * and empty values are left out.
 */
export function normalize<S extends Shape>(shape: S, raw: unknown, path = '$'): Payload<S> {
  try {
    return normalizeAny(shape, raw) as Payload<S>;
  } catch (error) {
    // The path is only spelled out for a value that does not fit: on success, building it for
    // every field would be most of the work.
    if (error instanceof Misfit) throw new DecodeError(`${path}${error.path.reverse().join('')}: ${error.message}`);
    throw error;
  }
}

/** A value that does not fit its shape, and where it is, gathered innermost first as the throw unwinds. */
class Misfit extends Error {
  readonly path: string[] = [];
}

/** The fields of an object shape, listed once. */
const FIELDS = new WeakMap<Shape, [string, Shape][]>();
function fieldsOf(shape: Extract<Shape, { kind: 'object' }>): [string, Shape][] {
  let fields = FIELDS.get(shape);
  if (fields === undefined) {
    fields = Object.entries(shape.fields);
    FIELDS.set(shape, fields);
  }
  return fields;
}

function normalizeAny(shape: Shape, raw: unknown): unknown {
  switch (shape.kind) {
    case 'int64': {
      const value = toInt64(raw);
      if (value === undefined) throw new Misfit('expected an int64');
      return value;
    }
    case 'int32': {
      const value = typeof raw === 'string' && INTEGER.test(raw) ? Number(raw) : raw;
      if (typeof value !== 'number' || !Number.isInteger(value)) throw new Misfit('expected an integer');
      return value;
    }
    case 'string':
      if (typeof raw === 'string') return raw;
      if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
      throw new Misfit('expected a string');
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === 'false') return raw === 'true';
      throw new Misfit('expected a boolean');
    case 'datetime': {
      // JSON carries ISO strings; the reference server's XML carries epoch milliseconds.
      const epoch =
        typeof raw === 'number' ? raw : typeof raw === 'string' && INTEGER.test(raw) ? Number(raw) : undefined;
      const date = epoch !== undefined ? new Date(epoch) : typeof raw === 'string' ? new Date(raw) : undefined;
      if (!date || Number.isNaN(date.getTime())) throw new Misfit('expected a date-time');
      return date.toISOString();
    }
    case 'object': {
      // An empty XML element (`<tag/>`) is an object with no fields.
      if (raw === '') return {};
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Misfit('expected an object');
      const source = raw as Record<string, unknown>;
      const result: Record<string, unknown> = {};
      for (const [name, field] of fieldsOf(shape)) {
        const value = source[name];
        if (value === undefined || value === null || value === '') continue;
        try {
          result[name] = normalizeAny(field, value);
        } catch (error) {
          if (error instanceof Misfit) error.path.push(`.${name}`);
          throw error;
        }
      }
      return result;
    }
    case 'list': {
      const items = listItems(raw);
      const result = new Array<unknown>(items.length);
      for (let index = 0; index < items.length; index += 1) {
        try {
          result[index] = normalizeAny(shape.of, items[index]);
        } catch (error) {
          if (error instanceof Misfit) error.path.push(`[${index}]`);
          throw error;
        }
      }
      return result;
    }
  }
}

/** The items of a list as JSON (an array) or XML (a wrapper element, possibly with one item, or empty) sends it. */
function listItems(raw: unknown): unknown[] {
  if (Array.isArray(raw)) return raw;
  if (raw === '' || raw === undefined || raw === null) return [];
  if (typeof raw === 'object') {
    // `<photoUrls><photoUrl>a</photoUrl></photoUrls>`, `<ArrayList><item>…</item></ArrayList>`:
    // whatever the item element is called, its occurrences are the items.
    return Object.values(raw as Record<string, unknown>).flatMap((items): unknown[] =>
      Array.isArray(items) ? (items as unknown[]) : [items],
    );
  }
  return [raw];
}

/**
 * Converts a payload to plain values for a JSON body: int64 strings become bigints so that they are
 * written as exact integers.
 */
function toJsonValue(shape: Shape, value: unknown): unknown {
  if (value === undefined || value === null) return undefined;
  switch (shape.kind) {
    case 'int64':
      return BigInt(value as string);
    case 'object': {
      const source = value as Record<string, unknown>;
      const result: Record<string, unknown> = {};
      for (const [name, field] of Object.entries(shape.fields)) {
        const converted = toJsonValue(field, source[name]);
        if (converted !== undefined) result[name] = converted;
      }
      return result;
    }
    case 'list':
      return (value as unknown[]).map((item) => toJsonValue(shape.of, item));
    default:
      return value;
  }
}

/** Writes a payload as JSON, with int64 fields as exact JSON integers. */
export function encodeJson<S extends Shape>(shape: S, value: Payload<S>): string {
  return stringifyLossless(toJsonValue(shape, value)) ?? 'null';
}

const xmlBuilder = new XMLBuilder({ ignoreAttributes: true, suppressEmptyNode: false });

function toXmlValue(shape: Shape, value: unknown): unknown {
  switch (shape.kind) {
    case 'object': {
      const source = value as Record<string, unknown>;
      const result: Record<string, unknown> = {};
      for (const [name, field] of Object.entries(shape.fields)) {
        if (source[name] !== undefined && source[name] !== null) result[name] = toXmlValue(field, source[name]);
      }
      return result;
    }
    case 'list':
      // Wrapped lists, as the pet store declares them: <photoUrls><photoUrl>…</photoUrl></photoUrls>.
      return { [shape.xmlItem]: (value as unknown[]).map((item) => toXmlValue(shape.of, item)) };
    default:
      return String(value);
  }
}

/** Writes an object payload as an XML document whose root is the shape's `xmlName`. */
export function encodeXml<S extends Shape & { kind: 'object' }>(shape: S, value: Payload<S>): string {
  return `<?xml version="1.0" encoding="UTF-8"?>${xmlBuilder.build({ [shape.xmlName]: toXmlValue(shape, value) })}`;
}

/**
 * Writes an object payload as `application/x-www-form-urlencoded`. Nested values use bracket
 * keys: `category[id]=1`, `photoUrls[0]=a`, `tags[0][name]=x` (brackets percent-encoded).
 */
export function encodeForm<S extends Shape & { kind: 'object' }>(shape: S, value: Payload<S>): string {
  return qs.stringify(value, { arrayFormat: 'indices', skipNulls: true });
}

/** Content types of the three body formats. */
const BODY_CONTENT_TYPES = {
  json: 'application/json',
  xml: 'application/xml',
  form: 'application/x-www-form-urlencoded',
} as const;

/** A body format the pet store accepts for its (J/X/F) operations. */
export type BodyFormat = keyof typeof BODY_CONTENT_TYPES;

/** Encodes an object payload in the given format, with its content type. */
export function encodeBody<S extends Shape & { kind: 'object' }>(
  format: BodyFormat,
  shape: S,
  value: Payload<S>,
): { contentType: string; data: string } {
  const data =
    format === 'json'
      ? encodeJson(shape, value)
      : format === 'xml'
        ? encodeXml(shape, value)
        : encodeForm(shape, value);
  return { contentType: BODY_CONTENT_TYPES[format], data };
}
