/**
 * Request body decoding and response encoding for the emulator.
 *
 * Bodies are decoded into a loose tree (records, arrays, strings, booleans and
 * LosslessNumber) whatever their media type, so one set of field readers can
 * turn JSON, XML and form input into typed records. Numbers are never passed
 * through a JavaScript number on the way, because int64 ids must stay exact.
 */
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';
import {
  LosslessNumber,
  isLosslessNumber,
  parse as parseLosslessJson,
  stringify as stringifyLosslessJson,
} from 'lossless-json';
import qs from 'qs';
import { apiError, mediaTypeOf } from './http.js';

/** The body formats the pet store accepts, named after their media types. */
export type BodyFormat = 'json' | 'xml' | 'form';

const MEDIA_TYPES: Record<string, BodyFormat> = {
  'application/json': 'json',
  'application/xml': 'xml',
  'application/x-www-form-urlencoded': 'form',
};

/**
 * A body that arrived but cannot be read as the expected record. Handlers
 * turn it into the upstream's "unable to convert input to X" answer, which
 * names the record, something only they know.
 */
export class UnreadableBody extends Error {}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** Elements whose children form a list; the parent is the root's direct child (e.g. `Pet.tags.tag`). */
const WRAPPED_LISTS = new Set(['photoUrls', 'tags']);

const xmlParser = new XMLParser({
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // Text is kept as written; the field readers convert it so int64 values stay exact.
  parseTagValue: false,
  jPath: true,
  // Without this a one-item list would decode as a lone value instead of an array.
  isArray: (_tagName, jPath) => {
    if (typeof jPath !== 'string') return false;
    const parts = jPath.split('.');
    return parts.length === 3 && WRAPPED_LISTS.has(parts[1] ?? '');
  },
});

const xmlBuilder = new XMLBuilder({ suppressEmptyNode: false });

/** A value the XML builder can write: text leaves, nested elements, repeated elements. */
export type XmlNode = string | number | boolean | XmlNode[] | { [element: string]: XmlNode };

/**
 * Reads a request body in one of the `accepted` formats.
 *
 * @returns the decoded tree, or `undefined` when there is no body (empty,
 *   whitespace only, or JSON `null`), so callers can answer their own
 *   "nothing provided" error.
 * @throws HttpError 415 when the Content-Type is not one of `accepted`.
 * @throws UnreadableBody when the text is not valid in its declared format.
 */
export function decodeBody(body: Buffer, contentType: string | undefined, accepted: readonly BodyFormat[]): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') return undefined;
  const mediaType = mediaTypeOf(contentType);
  const format = mediaType === undefined ? undefined : MEDIA_TYPES[mediaType];
  if (format === undefined || !accepted.includes(format)) {
    throw apiError(415, 'HTTP 415 Unsupported Media Type');
  }
  switch (format) {
    case 'json':
      return decodeJson(text);
    case 'xml':
      return decodeXml(text);
    case 'form':
      // Bracket keys (category[id], tags[0][name]) give nested records and lists.
      return qs.parse(text, { arrayLimit: 1000, depth: 5 });
  }
}

/**
 * Parses JSON keeping every number as a LosslessNumber (its exact text).
 *
 * @returns the tree, or `undefined` for a literal `null`.
 * @throws UnreadableBody on invalid JSON.
 */
export function decodeJson(text: string): unknown {
  let value: unknown;
  try {
    value = parseLosslessJson(text);
  } catch {
    throw new UnreadableBody('invalid JSON');
  }
  return value === null ? undefined : value;
}

/** Parses an XML document and returns the content of its root element, whatever the root is called. */
function decodeXml(text: string): unknown {
  if (XMLValidator.validate(text) !== true) throw new UnreadableBody('invalid XML');
  let document: unknown;
  try {
    document = xmlParser.parse(text);
  } catch {
    throw new UnreadableBody('invalid XML');
  }
  if (!isRecord(document)) throw new UnreadableBody('invalid XML');
  const roots = Object.values(document);
  if (roots.length !== 1) throw new UnreadableBody('invalid XML');
  // `<pet/>` decodes as an empty string: a record with no fields.
  return roots[0] === '' ? {} : roots[0];
}

/** Whether a decoded value is a record (not an array, not a LosslessNumber). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !isLosslessNumber(value);
}

/** Reads an own property only, so inherited names can never pose as fields. */
export function field(record: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/** Missing, null and empty text all mean "not given" in JSON, XML and form input alike. */
function isAbsent(value: unknown): value is undefined | null | '' {
  return value === undefined || value === null || value === '';
}

function scalarText(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (isLosslessNumber(value)) return value.value;
  throw new UnreadableBody('expected a scalar');
}

/**
 * Canonical decimal form of an int64 written as text, or `undefined` if the
 * text is not an integer in range. `007` becomes `7`, `+5` becomes `5`.
 */
function canonicalInt64(text: string): string | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const value = BigInt(text);
  if (value < INT64_MIN || value > INT64_MAX) return undefined;
  return value.toString();
}

/** Reads an int64 field (JSON number, or text from XML/form/quoted JSON) as canonical text. */
export function readInt64(value: unknown): string | undefined {
  if (isAbsent(value)) return undefined;
  const canonical = canonicalInt64(scalarText(value));
  if (canonical === undefined) throw new UnreadableBody('not an int64');
  return canonical;
}

/** Reads an int32 field. */
export function readInt32(value: unknown): number | undefined {
  if (isAbsent(value)) return undefined;
  const text = scalarText(value);
  if (!/^[+-]?\d+$/.test(text)) throw new UnreadableBody('not an int32');
  const number = Number(text);
  if (number < INT32_MIN || number > INT32_MAX) throw new UnreadableBody('not an int32');
  return number;
}

/** Reads a string field; numbers and booleans are accepted as their text, as Jackson coerces them. */
export function readString(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (isLosslessNumber(value)) return value.value;
  throw new UnreadableBody('not a string');
}

/** Reads a boolean field: JSON true/false, or the text `true`/`false` from XML and forms. */
export function readBoolean(value: unknown): boolean | undefined {
  if (isAbsent(value)) return undefined;
  if (typeof value === 'boolean') return value;
  const text = scalarText(value).toLowerCase();
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new UnreadableBody('not a boolean');
}

const ISO_DATE_TIME = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Reads a date-time field as an ISO 8601 UTC string. Accepts ISO text
 * (a missing zone means UTC, as with Jackson, not local time as with
 * `Date.parse`) or epoch milliseconds.
 */
export function readDateTime(value: unknown): string | undefined {
  if (isAbsent(value)) return undefined;
  const text = scalarText(value);
  let millis: number;
  if (/^-?\d+$/.test(text)) {
    millis = Number(text);
  } else {
    const match = ISO_DATE_TIME.exec(text);
    if (match === null) throw new UnreadableBody('not a date-time');
    const [, date, time, zone] = match;
    if (time === undefined) {
      millis = Date.parse(`${date}T00:00:00Z`);
    } else {
      const offset =
        zone === undefined ? 'Z' : zone.toUpperCase() === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
      millis = Date.parse(`${date}T${time}${offset}`);
    }
  }
  const date = new Date(millis);
  if (!Number.isSafeInteger(millis) || Number.isNaN(date.getTime())) throw new UnreadableBody('not a date-time');
  return date.toISOString();
}

/**
 * Reads a list field in any of the shapes the three formats produce: a JSON
 * array, an XML wrapper element (`<tags><tag>…</tag></tags>`, whatever the
 * item element is called), a form list (`photoUrls[0]=…`, or a record with
 * numeric keys past qs's array limit), or a lone value meaning one item.
 */
export function readList(value: unknown): unknown[] | undefined {
  if (isAbsent(value)) return undefined;
  if (Array.isArray(value)) return value as unknown[];
  if (isRecord(value)) {
    const keys = Object.keys(value);
    if (keys.length > 0 && keys.every((key) => /^\d+$/.test(key))) {
      return keys.sort((a, b) => Number(a) - Number(b)).map((key) => value[key]);
    }
    const [onlyKey] = keys;
    if (keys.length === 1 && onlyKey !== undefined) {
      const items = value[onlyKey];
      return Array.isArray(items) ? (items as unknown[]) : [items];
    }
    throw new UnreadableBody('not a list');
  }
  return [value];
}

/** Writes a JSON body; LosslessNumber values come out as bare JSON numbers with every digit. */
export function toJson(value: unknown): string {
  return stringifyLosslessJson(value) ?? 'null';
}

/** An int64 held as text, ready to be written as an unquoted JSON number. */
export function int64(id: string): LosslessNumber {
  return new LosslessNumber(id);
}

/** Writes an XML document with a single root element and no declaration, like the upstream. */
export function toXml(root: string, content: XmlNode): string {
  return xmlBuilder.build({ [root]: content });
}

/**
 * Parses an int64 path parameter.
 *
 * @throws HttpError 400 with the upstream's conversion message when `raw` is
 *   not an integer in the int64 range.
 */
export function parseInt64Param(raw: string): string {
  const canonical = canonicalInt64(raw);
  if (canonical === undefined) {
    throw apiError(400, `Input error: couldn't convert \`${raw}\` to type \`class java.lang.Long\``);
  }
  return canonical;
}
