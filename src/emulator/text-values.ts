/**
 * Values the emulator receives as text (a query or path parameter, an XML or form body), read as
 * the types the OpenAPI document gives them, for its contract check (`contract.ts`).
 */
import { isRecord } from './wire.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * The items of a list in XML or form input: an array, an XML wrapper element
 * (`<tags><tag>…</tag></tags>`, whatever the item element is called), a form list past qs's
 * array limit (numeric keys), or a lone value meaning one item. Anything else is left as it is,
 * for the validator to reject.
 */
export function listItems(value: unknown): unknown {
  if (Array.isArray(value)) return value;
  if (isRecord(value)) {
    const keys = Object.keys(value);
    if (keys.length > 0 && keys.every((key) => /^\d+$/.test(key)))
      return keys.sort((a, b) => Number(a) - Number(b)).map((key) => value[key]);
    const [only] = keys;
    if (keys.length === 1 && only !== undefined) {
      const items = value[only];
      return Array.isArray(items) ? items : [items];
    }
    return value;
  }
  return [value];
}

/**
 * Text from a query, a path, XML or a form as the schema's type; text that does not convert is left
 * for the validator to reject.
 */
export function fromText(schema: { type?: string; format?: string }, text: string): unknown {
  if (schema.type === 'integer' && /^[+-]?\d+$/.test(text)) {
    const value = BigInt(text);
    const [min, max] = schema.format === 'int32' ? [BigInt(INT32_MIN), BigInt(INT32_MAX)] : [INT64_MIN, INT64_MAX];
    return value >= min && value <= max ? Number(text) : text;
  }
  if (schema.type === 'number' && text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
  if (schema.type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}
