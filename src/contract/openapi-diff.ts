/**
 * Compares an upstream's OpenAPI document with the one the gateway is built on
 * (`schema/petstore.openapi.yaml`, `schema/plants.openapi.yaml`): operations and methods,
 * parameters, request bodies, answers, media types and security. Each difference is classed
 * breaking, dangerous or safe for this gateway and names the GraphQL fields and arguments it
 * affects (`graphql-impact.ts` says which operation feeds what). `scripts/check-upstream.ts` is
 * the command around it.
 */
import type { GraphQLSchema } from 'graphql';
import { byClass, ChangeList, listed, type Change } from './changes.js';
import { coordinatePlace, itemPlace, rootPlace, usesOf, type Area, type OperationUse } from './graphql-impact.js';
import { deref, isRecord, operationsOf, type OpenApiObject, type OperationEntry } from './openapi.js';
import { compareSchemas, flatten, type Side, type Where } from './schema-diff.js';
import { compareSecurity } from './security-diff.js';

/** What {@link diffDocuments} compares. */
export type DiffInput = {
  area: Area;
  /** the gateway's document */
  base: OpenApiObject;
  /** the upstream's document */
  upstream: OpenApiObject;
  /** the gateway's executable schema (`createSchema()`) */
  schema: GraphQLSchema;
  /** the operations the gateway uses, by operationId. @default usesOf(area) */
  uses?: Readonly<Record<string, OperationUse>>;
};

/** An input that is not an OpenAPI 3 document, or a document that cannot be read. */
export class DocumentError extends Error {}

const side = (root: OpenApiObject, name: string): Side => ({
  root,
  fail: (message) => new DocumentError(`${name}: ${message}`),
});

/** `/pet/{petId}` and `/pet/{id}` are the same path: what a parameter is called does not reach the wire. */
function pathKey(entry: OperationEntry): string {
  return `${entry.method} ${entry.path.replace(/\{[^}]*\}/g, '{}')}`;
}

function operationIdOf(entry: OperationEntry): string | undefined {
  const id = entry.operation['operationId'];
  return typeof id === 'string' ? id : undefined;
}

/** Checks that `root` is an OpenAPI 3 document with paths; throws a {@link DocumentError} naming what is wrong. */
export function checkDocument(root: unknown, name: string): OpenApiObject {
  if (!isRecord(root)) throw new DocumentError(`${name} is not an OpenAPI document (not an object)`);
  const version = root['openapi'];
  if (typeof version !== 'string' || !version.startsWith('3.')) {
    const swagger =
      typeof root['swagger'] === 'string' ? ` (Swagger ${root['swagger']}; convert it to OpenAPI 3 first)` : '';
    throw new DocumentError(`${name} is not an OpenAPI 3 document: it has no \`openapi: 3.x\` field${swagger}`);
  }
  if (!isRecord(root['paths'])) throw new DocumentError(`${name} has no paths`);
  return root;
}

/** Every difference between the two documents, breaking first (see {@link DiffInput}). */
export function diffDocuments(input: DiffInput): Change[] {
  const uses = input.uses ?? usesOf(input.area);
  const base = side(input.base, 'the gateway document');
  const upstream = side(input.upstream, 'the upstream document');
  const upstreamOperations = operationsOf(upstream.root, upstream.fail);
  const byPath = new Map(upstreamOperations.map((entry) => [pathKey(entry), entry]));
  const byId = new Map(
    upstreamOperations.flatMap((entry) => (operationIdOf(entry) ? [[operationIdOf(entry), entry]] : [])),
  );
  const matched = new Set<OperationEntry>();
  const changes: Change[] = [];
  for (const entry of operationsOf(base.root, base.fail)) {
    const operationId = operationIdOf(entry);
    const use = operationId === undefined ? undefined : uses[operationId];
    const list = new ChangeList(entry.key, operationId);
    const counterpart = byPath.get(pathKey(entry));
    if (counterpart === undefined) {
      operationGone(list, use, operationId === undefined ? undefined : byId.get(operationId));
    } else {
      matched.add(counterpart);
      if (use !== undefined) compareOperation({ base, upstream, schema: input.schema, use, list }, entry, counterpart);
    }
    changes.push(...list.changes);
  }
  for (const entry of upstreamOperations.filter((each) => !matched.has(each))) {
    const list = new ChangeList(entry.key, operationIdOf(entry));
    list.add('safe', 'operation added', 'the gateway does not call it');
    changes.push(...list.changes);
  }
  return byClass(changes);
}

function operationGone(list: ChangeList, use: OperationUse | undefined, moved: OperationEntry | undefined): void {
  const change = moved ? `operation moved to ${moved.key}` : 'operation removed';
  if (use === undefined) return list.add('safe', change, 'the gateway does not call it');
  list.add('breaking', change, `the gateway calls it for ${listed(use.fields)}, which would fail`, use.fields);
}

/** What comparing one used operation needs. */
type OperationComparison = {
  base: Side;
  upstream: Side;
  schema: GraphQLSchema;
  use: OperationUse;
  list: ChangeList;
};

function compareOperation(context: OperationComparison, base: OperationEntry, upstream: OperationEntry): void {
  const { list, use } = context;
  if (upstream.operation['deprecated'] === true && base.operation['deprecated'] !== true) {
    list.add(
      'dangerous',
      'operation deprecated',
      `the gateway calls it for ${listed(use.fields)}; it may be removed`,
      use.fields,
    );
  }
  compareParameters(context, base, upstream);
  compareRequestBody(context, base.operation['requestBody'], upstream.operation['requestBody']);
  compareAnswer(context, base.operation['responses'], upstream.operation['responses']);
  compareSecurity({ base: context.base, upstream: context.upstream, use, list }, base.operation, upstream.operation);
}

/** A parameter of an operation, with its key: path parameters by position, the others by place and name. */
type Parameter = {
  key: string;
  name: string;
  in: string;
  required: boolean;
  style: string;
  explode: boolean;
  schema: unknown;
};

function parametersOf(document: Side, entry: OperationEntry): Map<string, Parameter> {
  const declared = new Map<string, Parameter>();
  const pathNames = [...entry.path.matchAll(/\{([^}]*)\}/g)].map((match) => match[1]);
  for (const raw of [
    ...entry.sharedParameters,
    ...(Array.isArray(entry.operation['parameters']) ? (entry.operation['parameters'] as unknown[]) : []),
  ]) {
    const parameter = deref(document.root, raw, document.fail);
    const name = String(parameter['name']);
    const place = String(parameter['in']);
    // Form style (the default in a query and a cookie) explodes by default; simple (path, header) does not.
    const style =
      typeof parameter['style'] === 'string'
        ? parameter['style']
        : place === 'query' || place === 'cookie'
          ? 'form'
          : 'simple';
    const key = place === 'path' ? `path#${pathNames.indexOf(name)}` : `${place}:${name}`;
    declared.set(key, {
      key,
      name,
      in: place,
      required: place === 'path' || parameter['required'] === true,
      style,
      explode: typeof parameter['explode'] === 'boolean' ? parameter['explode'] : style === 'form',
      schema: parameter['schema'],
    });
  }
  return declared;
}

function compareParameters(
  context: OperationComparison,
  baseEntry: OperationEntry,
  upstreamEntry: OperationEntry,
): void {
  const base = parametersOf(context.base, baseEntry);
  const upstream = parametersOf(context.upstream, upstreamEntry);
  for (const [key, parameter] of base) {
    const counterpart = upstream.get(key);
    compareParameter(context, parameter, counterpart);
  }
  for (const [key, parameter] of upstream) {
    if (base.has(key)) continue;
    const words = `${parameter.in} parameter \`${parameter.name}\` was added`;
    if (parameter.required)
      context.list.add(
        'breaking',
        `${words}, required`,
        'the gateway never sends it, so every call would be refused',
        context.use.fields,
      );
    else context.list.add('safe', `${words}, optional`, 'the gateway does not send it');
  }
}

function compareParameter(
  context: OperationComparison,
  parameter: Parameter,
  counterpart: Parameter | undefined,
): void {
  const { list } = context;
  const use = context.use.parameters[parameter.name];
  const name = `${parameter.in} parameter \`${parameter.name}\``;
  const affects = use?.from ?? [];
  if (counterpart === undefined) {
    if (use === undefined) return list.add('safe', `${name} was removed`, 'the gateway does not send it');
    return list.add(
      'dangerous',
      `${name} was removed`,
      `the gateway still sends it from ${listed(affects)}; the upstream may ignore or refuse it`,
      affects,
    );
  }
  if (!parameter.required && counterpart.required && !(use?.always ?? false)) {
    const effect =
      use === undefined
        ? 'the gateway never sends it, so every call would be refused'
        : `calls made without ${listed(affects)} would be refused`;
    list.add('breaking', `${name} is now required`, effect, affects.length > 0 ? affects : context.use.fields);
  }
  const base = flatten(context.base, parameter.schema);
  const upstream = flatten(context.upstream, counterpart.schema);
  const isList = base.type === 'array' || upstream.type === 'array';
  if ((parameter.style !== counterpart.style || parameter.explode !== counterpart.explode) && isList) {
    const styleOf = (of: typeof parameter) => `${of.style}${of.explode ? ', exploded' : ''}`;
    const words = `${name} changed from ${styleOf(parameter)} to ${styleOf(counterpart)}`;
    if (use === undefined || use.oneValue === true)
      list.add(
        'safe',
        words,
        use ? 'the gateway sends one value per call, written the same either way' : 'the gateway does not send it',
      );
    else list.add('dangerous', words, 'the gateway writes several values the old way', affects);
  }
  const graph = use === undefined ? undefined : coordinatePlace(context.schema, use.from[0] ?? '');
  const where: Where = { direction: 'request', whole: name, field: `${name} field` };
  let [baseSchema, upstreamSchema] = [parameter.schema, counterpart.schema];
  if (use?.oneValue === true && (base.type === 'array') !== (upstream.type === 'array')) {
    // One value per call reads the same as a single value or as a list of one.
    list.add(
      'safe',
      `${name} changed from ${base.type === 'array' ? 'a list to one value' : 'one value to a list'}`,
      'the gateway sends one value per call',
      affects,
    );
    baseSchema = base.type === 'array' ? base.items : baseSchema;
    upstreamSchema = upstream.type === 'array' ? upstream.items : upstreamSchema;
  }
  const place = graph === undefined ? undefined : itemPlace(graph);
  compareSchemas(
    { base: context.base, upstream: context.upstream, where, changes: list, via: affects },
    place,
    baseSchema,
    upstreamSchema,
  );
}

/** The content of a request body or answer, by lower-cased media type. */
function contentOf(document: Side, raw: unknown): Map<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  const value = deref(document.root, raw, document.fail);
  const content = isRecord(value['content']) ? value['content'] : {};
  return new Map(
    Object.entries(content).map(([type, media]) => [type.toLowerCase(), isRecord(media) ? media['schema'] : undefined]),
  );
}

function compareRequestBody(context: OperationComparison, baseRaw: unknown, upstreamRaw: unknown): void {
  const { list, use } = context;
  const sends = use.body !== undefined || use.bodyMediaType !== undefined;
  const upstreamBody =
    upstreamRaw === undefined ? undefined : deref(context.upstream.root, upstreamRaw, context.upstream.fail);
  if (!sends) {
    if (upstreamBody?.['required'] === true)
      list.add(
        'breaking',
        'request body is now required',
        'the gateway sends none, so every call would be refused',
        use.fields,
      );
    return;
  }
  const base = contentOf(context.base, baseRaw) ?? new Map<string, unknown>();
  const upstream = contentOf(context.upstream, upstreamRaw);
  if (upstream === undefined)
    return list.add(
      'dangerous',
      'request body removed',
      'the gateway still sends one; the upstream may ignore or refuse it',
      use.fields,
    );
  // What the gateway sends: a fixed media type, or JSON unless PETSTORE_BODY_FORMAT says otherwise.
  const sent = use.bodyMediaType ?? 'application/json';
  for (const type of base.keys()) {
    if (upstream.has(type)) continue;
    if (type === sent)
      list.add(
        'breaking',
        `request body no longer takes ${type}`,
        'the gateway sends it, so every call would be refused',
        use.fields,
      );
    else
      list.add(
        'dangerous',
        `request body no longer takes ${type}`,
        `calls fail when PETSTORE_BODY_FORMAT picks it`,
        use.fields,
      );
  }
  for (const type of upstream.keys())
    if (!base.has(type)) list.add('safe', `request body also takes ${type}`, 'the gateway does not send it');
  const type = upstream.has(sent) ? sent : [...base.keys()].find((each) => upstream.has(each));
  if (type === undefined || use.body === undefined) return;
  const where: Where = { direction: 'request', whole: 'request body', field: 'request body field' };
  const place = rootPlace(context.schema, use.body);
  compareSchemas(
    { base: context.base, upstream: context.upstream, where, changes: list, via: use.fields },
    place,
    base.get(type),
    upstream.get(type),
  );
}

/** The successful answer of an operation's responses: its status and content. */
function successOf(
  document: Side,
  raw: unknown,
  status?: string,
): { status: string; content: Map<string, unknown> } | undefined {
  const responses = isRecord(raw) ? raw : {};
  const codes = Object.keys(responses);
  const chosen =
    (status !== undefined && codes.includes(status) ? status : undefined) ??
    codes.find((code) => /^2\d\d$/.test(code)) ??
    codes.find((code) => code.toUpperCase() === '2XX') ??
    (codes.includes('default') ? 'default' : undefined);
  return chosen === undefined
    ? undefined
    : { status: chosen, content: contentOf(document, responses[chosen]) ?? new Map<string, unknown>() };
}

function compareAnswer(context: OperationComparison, baseRaw: unknown, upstreamRaw: unknown): void {
  const { list, use } = context;
  const base = successOf(context.base, baseRaw);
  if (base === undefined) return;
  const upstream = successOf(context.upstream, upstreamRaw, base.status);
  if (upstream === undefined)
    return list.add(
      'breaking',
      'no successful answer is declared any more',
      `${listed(use.fields)} would fail`,
      use.fields,
    );
  if (upstream.status !== base.status)
    list.add(
      'safe',
      `successful answer is now ${upstream.status}, was ${base.status}`,
      'the gateway takes any 2xx answer',
    );
  if (use.answer === undefined) return;
  if (upstream.content.size === 0 && base.content.size > 0) {
    return list.add(
      'dangerous',
      'successful answer no longer declares a body',
      `the gateway reads one into ${listed([use.answer])}`,
      use.fields,
    );
  }
  for (const type of base.content.keys()) {
    if (upstream.content.has(type)) continue;
    if (type === 'application/json')
      list.add('breaking', `answer no longer comes as ${type}`, 'the gateway asks for JSON', use.fields);
    else
      list.add(
        'dangerous',
        `answer no longer comes as ${type}`,
        'calls fail when PETSTORE_ACCEPT asks for it',
        use.fields,
      );
  }
  for (const type of upstream.content.keys())
    if (!base.content.has(type)) list.add('safe', `answer also comes as ${type}`, 'the gateway does not ask for it');
  if (!base.content.has('application/json') || !upstream.content.has('application/json')) return;
  const where: Where = { direction: 'answer', whole: 'response body', field: 'response field' };
  const comparison = { base: context.base, upstream: context.upstream, where, changes: list, via: use.fields };
  const place = rootPlace(context.schema, use.answer);
  const baseSchema = base.content.get('application/json');
  const upstreamSchema = upstream.content.get('application/json');
  if (use.mapValues === undefined) return compareSchemas(comparison, place, baseSchema, upstreamSchema);
  // A map answer (the inventory): its values feed one field of the entries.
  const values = coordinatePlace(context.schema, use.mapValues);
  const baseMap = flatten(context.base, baseSchema);
  const upstreamMap = flatten(context.upstream, upstreamSchema);
  const mapWhere: Where = { direction: 'answer', whole: 'response values', field: 'response field' };
  compareSchemas(
    { ...comparison, where: mapWhere, via: [use.mapValues] },
    values,
    baseMap.additionalProperties,
    upstreamMap.additionalProperties,
  );
}
