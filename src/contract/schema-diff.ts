/**
 * Compares two schemas of the same value (an answer, a request body, a parameter), one from the
 * gateway's document and one from the upstream's, walking them together with the place in the
 * graph each value feeds. Each difference is classed for this gateway: a change to a value the
 * graph does not use is safe.
 */
import { getNamedType } from 'graphql';
import { listed, type ChangeList } from './changes.js';
import { describePlace, enumValues, fieldPlace, isNullable, itemPlace, type GraphPlace } from './graphql-impact.js';
import { deref, isRecord, type OpenApiObject } from './openapi.js';

/** A schema with its references followed and its `allOf`/`anyOf`/`oneOf` parts merged. */
export type FlatSchema = {
  type?: string;
  format?: string;
  enum?: unknown[];
  nullable: boolean;
  properties: Record<string, unknown>;
  required: Set<string>;
  items?: unknown;
  additionalProperties?: unknown;
};

/** A document, to follow references in. */
export type Side = { root: OpenApiObject; fail: (message: string) => Error };

/** The schema `raw` stands for, flattened (see {@link FlatSchema}). */
export function flatten(side: Side, raw: unknown, depth = 0): FlatSchema {
  const schema = raw === undefined ? {} : deref(side.root, raw, side.fail);
  const flat: FlatSchema = {
    ...(typeof schema['type'] === 'string' ? { type: schema['type'] } : {}),
    ...(typeof schema['format'] === 'string' ? { format: schema['format'] } : {}),
    ...(Array.isArray(schema['enum']) ? { enum: schema['enum'] as unknown[] } : {}),
    nullable: schema['nullable'] === true,
    properties: isRecord(schema['properties']) ? { ...schema['properties'] } : {},
    required: new Set(Array.isArray(schema['required']) ? schema['required'].map(String) : []),
    ...(schema['items'] === undefined ? {} : { items: schema['items'] }),
    ...(isRecord(schema['additionalProperties']) ? { additionalProperties: schema['additionalProperties'] } : {}),
  };
  if (depth > 10) return flat;
  // allOf: every part holds, so properties and required fields add up.
  for (const part of Array.isArray(schema['allOf']) ? schema['allOf'] : [])
    merge(flat, flatten(side, part, depth + 1), true);
  // anyOf/oneOf: any part may be the answer, so a field is required only when every part requires it.
  const alternatives = [schema['anyOf'], schema['oneOf']].flatMap((parts): unknown[] =>
    Array.isArray(parts) ? parts : [],
  );
  const flats = alternatives.map((part) => flatten(side, part, depth + 1));
  for (const part of flats) merge(flat, part, false);
  const [first] = flats;
  for (const name of first?.required ?? []) if (flats.every((part) => part.required.has(name))) flat.required.add(name);
  return flat;
}

function merge(into: FlatSchema, part: FlatSchema, required: boolean): void {
  into.type ??= part.type;
  into.format ??= part.format;
  if (part.enum !== undefined) into.enum ??= part.enum;
  if (part.items !== undefined) into.items ??= part.items;
  for (const [name, schema] of Object.entries(part.properties)) into.properties[name] ??= schema;
  if (required) for (const name of part.required) into.required.add(name);
}

/** Which way the value travels: an answer the gateway reads, or a request value it sends. */
type Direction = 'answer' | 'request';

/** Where in an operation the compared value is, as messages name it. */
export type Where = {
  direction: Direction;
  /** the whole value: `response body`, ``query parameter `status` `` */
  whole: string;
  /** one field of it: `response field`, `request body field` */
  field: string;
};

/** What one comparison needs: the two documents, where it is, and where the changes go. */
export type Comparison = {
  base: Side;
  upstream: Side;
  where: Where;
  changes: ChangeList;
  /** the GraphQL fields that make the call, named with changes to its answer's root */
  via: readonly string[];
};

/** One node of the walk: its JSON location (`tags[].name`), the graph place it feeds, and the two schemas. */
type Node = { path: string; place: GraphPlace | undefined; base: unknown; upstream: unknown; depth: number };

function subject(where: Where, path: string): string {
  if (path === '') return where.whole;
  // The items of a list parameter or of a list answer: `query parameter \`status\` items`.
  return path === '[]' ? `${where.whole} items` : `${where.field} \`${path}\``;
}

function typeText(flat: FlatSchema): string {
  if (flat.type === undefined) return 'any type';
  return flat.format === undefined ? flat.type : `${flat.type} (${flat.format})`;
}

/** Compares two schemas of the same value, with the graph place the value feeds (undefined: not used). */
export function compareSchemas(
  comparison: Comparison,
  place: GraphPlace | undefined,
  base: unknown,
  upstream: unknown,
): void {
  compareNode(comparison, { path: '', place, base, upstream, depth: 0 });
}

function compareNode(comparison: Comparison, node: Node): void {
  if (node.depth > 12) return;
  const base = flatten(comparison.base, node.base);
  const upstream = flatten(comparison.upstream, node.upstream);
  if (!compareType(comparison, node, base, upstream)) return;
  compareFormat(comparison, node, base, upstream);
  compareEnum(comparison, node, base, upstream);
  compareNullable(comparison, node, base, upstream);
  compareProperties(comparison, node, base, upstream);
  if (base.items !== undefined && upstream.items !== undefined) {
    const place = node.place === undefined ? undefined : itemPlace(node.place);
    compareNode(comparison, {
      ...node,
      path: `${node.path}[]`,
      place,
      base: base.items,
      upstream: upstream.items,
      depth: node.depth + 1,
    });
  }
  if (base.additionalProperties !== undefined && upstream.additionalProperties !== undefined) {
    compareNode(comparison, {
      ...node,
      path: `${node.path}{*}`,
      base: base.additionalProperties,
      upstream: upstream.additionalProperties,
      depth: node.depth + 1,
    });
  }
}

function affected(comparison: Comparison, node: Node): string[] {
  if (node.place === undefined) return [];
  return node.path === '' ? [...comparison.via] : [node.place.coordinate];
}

/** A change of type; false when the types differ (the walk stops there). */
function compareType(comparison: Comparison, node: Node, base: FlatSchema, upstream: FlatSchema): boolean {
  if (base.type === upstream.type || base.type === undefined || upstream.type === undefined) return true;
  // An integer is a number too: a number field that becomes an integer one reads the same.
  if (base.type === 'number' && upstream.type === 'integer' && comparison.where.direction === 'answer') return true;
  const change = `${subject(comparison.where, node.path)} changed type from ${typeText(base)} to ${typeText(upstream)}`;
  if (node.place === undefined) {
    comparison.changes.add('safe', change, 'the gateway does not use it');
  } else if (comparison.where.direction === 'answer') {
    comparison.changes.add(
      'breaking',
      change,
      `${describePlace(node.place)} would fail to read it`,
      affected(comparison, node),
    );
  } else {
    comparison.changes.add(
      'breaking',
      change,
      `the gateway sends ${typeText(base)} from ${describePlace(node.place)}`,
      affected(comparison, node),
    );
  }
  return false;
}

function compareFormat(comparison: Comparison, node: Node, base: FlatSchema, upstream: FlatSchema): void {
  if (base.format === upstream.format) return;
  const change = `${subject(comparison.where, node.path)} changed format from ${base.format ?? 'none'} to ${upstream.format ?? 'none'}`;
  if (node.place === undefined) return comparison.changes.add('safe', change, 'the gateway does not use it');
  const scalar = getNamedType(node.place.type).name;
  // An Int holds 32 bits and a DateTime needs a date: a wider or looser value fails to serialize.
  const strict = comparison.where.direction === 'answer' && (scalar === 'Int' || scalar === 'DateTime');
  comparison.changes.add(
    strict ? 'breaking' : 'dangerous',
    change,
    strict
      ? `${describePlace(node.place)} would fail to serialize values outside ${base.format ?? 'its type'}`
      : `${describePlace(node.place)} may carry values the new format does not describe`,
    affected(comparison, node),
  );
}

function compareEnum(comparison: Comparison, node: Node, base: FlatSchema, upstream: FlatSchema): void {
  if (base.enum === undefined && upstream.enum === undefined) return;
  const where = subject(comparison.where, node.path);
  const { changes } = comparison;
  if (node.place === undefined) {
    if (JSON.stringify(base.enum) !== JSON.stringify(upstream.enum))
      changes.add('safe', `${where} changed its allowed values`, 'the gateway does not use it');
    return;
  }
  const place = node.place;
  const graphValues = enumValues(place);
  const affects = affected(comparison, node);
  if (comparison.where.direction === 'answer') {
    if (upstream.enum === undefined) {
      const effect = graphValues
        ? `a value outside it would make ${describePlace(place)} fail to serialize`
        : `${describePlace(place)} passes any value through`;
      return changes.add(
        graphValues ? 'breaking' : 'safe',
        `${where} is no longer limited to ${listed(base.enum ?? [])}`,
        effect,
        affects,
      );
    }
    if (base.enum === undefined)
      return changes.add(
        'safe',
        `${where} is now limited to ${listed(upstream.enum)}`,
        'fewer values than the gateway reads',
        affects,
      );
    const gained = upstream.enum.filter((value) => !base.enum?.includes(value));
    const lost = base.enum.filter((value) => !upstream.enum?.includes(value));
    if (gained.length > 0) {
      const unknown = graphValues ? gained.filter((value) => !graphValues.has(String(value))) : [];
      const words = `${where} gained the value${gained.length > 1 ? 's' : ''} ${listed(gained)}`;
      if (unknown.length > 0)
        changes.add('breaking', words, `${describePlace(place)} would fail to serialize`, affects);
      else
        changes.add('safe', words, `${describePlace(place)} ${graphValues ? 'has it' : 'passes it through'}`, affects);
    }
    if (lost.length > 0)
      changes.add(
        'safe',
        `${where} lost the value${lost.length > 1 ? 's' : ''} ${listed(lost)}`,
        'the gateway will just not see it',
        affects,
      );
    return;
  }
  compareRequestEnum(comparison, node, place, base, upstream);
}

function compareRequestEnum(
  comparison: Comparison,
  node: Node,
  place: GraphPlace,
  base: FlatSchema,
  upstream: FlatSchema,
): void {
  const where = subject(comparison.where, node.path);
  const graphValues = enumValues(place);
  const affects = affected(comparison, node);
  const { changes } = comparison;
  if (upstream.enum === undefined)
    return changes.add(
      'safe',
      `${where} is no longer limited to ${listed(base.enum ?? [])}`,
      'the upstream takes more values than the gateway sends',
      affects,
    );
  if (base.enum === undefined) {
    return changes.add(
      'dangerous',
      `${where} is now limited to ${listed(upstream.enum)}`,
      `${describePlace(place)} may carry other values, which the upstream would refuse`,
      affects,
    );
  }
  const lost = base.enum.filter((value) => !upstream.enum?.includes(value));
  const gained = upstream.enum.filter((value) => !base.enum?.includes(value));
  if (lost.length > 0) {
    const sent = graphValues ? lost.filter((value) => graphValues.has(String(value))) : lost;
    const words = `${where} lost the value${lost.length > 1 ? 's' : ''} ${listed(lost)}`;
    if (sent.length === 0) changes.add('safe', words, 'the gateway never sends it', affects);
    else if (graphValues)
      changes.add(
        'breaking',
        words,
        `the gateway sends it for ${describePlace(place)}; the upstream would refuse it`,
        affects,
      );
    else changes.add('dangerous', words, `${describePlace(place)} may carry it; the upstream would refuse it`, affects);
  }
  if (gained.length > 0)
    changes.add(
      'safe',
      `${where} gained the value${gained.length > 1 ? 's' : ''} ${listed(gained)}`,
      'the gateway sends only the values it knows',
      affects,
    );
}

function compareNullable(comparison: Comparison, node: Node, base: FlatSchema, upstream: FlatSchema): void {
  if (comparison.where.direction !== 'answer' || base.nullable || !upstream.nullable) return;
  const where = subject(comparison.where, node.path);
  if (node.place === undefined || isNullable(node.place)) {
    comparison.changes.add(
      'safe',
      `${where} may now be null`,
      node.place ? `${describePlace(node.place)} may be null` : 'the gateway does not use it',
      affected(comparison, node),
    );
  } else {
    comparison.changes.add(
      'dangerous',
      `${where} may now be null`,
      `${describePlace(node.place)} is non-null and would fail`,
      affected(comparison, node),
    );
  }
}

function compareProperties(comparison: Comparison, node: Node, base: FlatSchema, upstream: FlatSchema): void {
  const names = new Set([...Object.keys(base.properties), ...Object.keys(upstream.properties)]);
  for (const name of names) {
    const path = node.path === '' ? name : `${node.path}.${name}`;
    const place = node.place === undefined ? undefined : fieldPlace(node.place, name);
    const child: Node = {
      path,
      place,
      base: base.properties[name],
      upstream: upstream.properties[name],
      depth: node.depth + 1,
    };
    if (child.base === undefined || child.upstream === undefined) {
      if (comparison.where.direction === 'answer') answerField(comparison, child, base, upstream);
      else requestField(comparison, child, upstream);
      continue;
    }
    if (comparison.where.direction === 'answer')
      answerRequired(comparison, child, base.required.has(name) && !upstream.required.has(name));
    else if (!base.required.has(name) && upstream.required.has(name))
      requestRequired(comparison, child, 'is now required');
    compareNode(comparison, child);
  }
}

/** A field of an answer that one document has and the other has not. */
function answerField(comparison: Comparison, node: Node, base: FlatSchema, upstream: FlatSchema): void {
  const where = subject(comparison.where, node.path);
  const { changes } = comparison;
  if (node.base === undefined)
    return changes.add(
      'safe',
      `${where} was added`,
      node.place ? `${describePlace(node.place)} can read it` : 'the gateway does not read it (dropped when decoded)',
    );
  // An answer described loosely (no properties at all) has not lost its fields, it no longer lists them.
  if (
    Object.keys(upstream.properties).length === 0 &&
    Object.keys(base.properties).length > 0 &&
    upstream.type === undefined
  )
    return;
  if (node.place === undefined) return changes.add('safe', `${where} was removed`, 'the gateway does not read it');
  const effect = isNullable(node.place)
    ? `${describePlace(node.place)} would be null`
    : `${describePlace(node.place)} is non-null and would fail`;
  changes.add(isNullable(node.place) ? 'dangerous' : 'breaking', `${where} was removed`, effect, [
    node.place.coordinate,
  ]);
}

function answerRequired(comparison: Comparison, node: Node, noLongerRequired: boolean): void {
  if (!noLongerRequired) return;
  const where = subject(comparison.where, node.path);
  if (node.place === undefined || isNullable(node.place)) {
    comparison.changes.add(
      'safe',
      `${where} is no longer required`,
      node.place ? `${describePlace(node.place)} may be null` : 'the gateway does not read it',
    );
  } else {
    comparison.changes.add(
      'dangerous',
      `${where} is no longer required`,
      `${describePlace(node.place)} is non-null and would fail when it is missing`,
      [node.place.coordinate],
    );
  }
}

/** A field of a request body that one document has and the other has not. */
function requestField(comparison: Comparison, node: Node, upstream: FlatSchema): void {
  const where = subject(comparison.where, node.path);
  const name = node.path.split('.').pop() ?? node.path;
  if (node.base !== undefined) {
    if (node.place === undefined)
      return comparison.changes.add('safe', `${where} was removed`, 'the gateway does not send it');
    return comparison.changes.add(
      'dangerous',
      `${where} was removed`,
      `the gateway still sends it from ${describePlace(node.place)}; the upstream may refuse or drop it`,
      [node.place.coordinate],
    );
  }
  if (upstream.required.has(name)) return requestRequired(comparison, node, 'was added, required');
  comparison.changes.add('safe', `${where} was added, optional`, 'the gateway does not send it');
}

/** A request field the upstream now requires: breaking when the gateway never sends it. */
function requestRequired(comparison: Comparison, node: Node, words: string): void {
  const where = `${subject(comparison.where, node.path)} ${words}`;
  if (node.place === undefined)
    return comparison.changes.add(
      'breaking',
      where,
      'the gateway never sends it, so every call would be refused',
      comparison.via,
    );
  if (isNullable(node.place)) {
    return comparison.changes.add(
      'dangerous',
      where,
      `the gateway sends it only when ${describePlace(node.place)} is given`,
      [node.place.coordinate],
    );
  }
  comparison.changes.add('safe', where, `the gateway always sends it (${describePlace(node.place)} is required)`, [
    node.place.coordinate,
  ]);
}
