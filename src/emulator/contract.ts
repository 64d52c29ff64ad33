/**
 * The emulator's contract: every request is checked against the project's OpenAPI documents
 * (`schema/petstore.openapi.yaml`, `schema/plants.openapi.yaml`) before an operation sees it.
 * The credential an operation needs comes from its `security`; its parameters and body must
 * fit its `parameters` and `requestBody`. The same documents generate the gateway's payload
 * shapes and back the Prism tests, so a gateway request the emulator accepts is one the
 * documents describe.
 *
 * Validator: Ajv (with ajv-formats for int32, int64 and date-time), the JSON Schema validator
 * most of the ecosystem builds on (Prism and openapi-backend included). openapi-backend would
 * add routing, which the emulator already has, but validates JSON bodies only, while the pet
 * store takes XML and form bodies too. What OpenAPI adds around JSON Schema (parameter styles,
 * media types, security) is small and is done here.
 */
import { readFile } from 'node:fs/promises';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import {
  deref as derefIn,
  plainJson,
  resolvePointer as resolveIn,
  schemaCompiler as compilerOf,
  type CompileSchema,
} from '../contract/openapi.js';
import { projectFile } from '../project-files.js';
import { apiError, HttpError, mediaTypeOf } from './http.js';
import { fromText, listItems } from './text-values.js';
import { decodeBody, isRecord, UnreadableBody, type BodyFormat } from './wire.js';

/** The REST areas the emulator serves, each described by one document. */
export type Area = 'petstore' | 'plants';

const DOCUMENTS: Record<Area, URL> = {
  // From the project root, so that the emulator finds them wherever it is started from.
  petstore: projectFile('schema/petstore.openapi.yaml'),
  plants: projectFile('schema/plants.openapi.yaml'),
};

/** The parts of an OpenAPI 3.0 schema object the emulator reads (Ajv reads the rest). */
type SchemaObject = {
  $ref?: string;
  type?: string;
  format?: string;
  properties?: Record<string, SchemaObject>;
  items?: SchemaObject;
  allOf?: SchemaObject[];
};
type ParameterObject = {
  name: string;
  in: string;
  required?: boolean;
  style?: string;
  explode?: boolean;
  schema?: SchemaObject;
};
type RequestBodyObject = { content?: Record<string, { schema?: SchemaObject }> };
type SecurityRequirement = Record<string, string[]>;
type OperationObject = {
  operationId?: string;
  parameters?: unknown[];
  requestBody?: unknown;
  security?: SecurityRequirement[];
};
type SecurityScheme = { type: string; scheme?: string; in?: string; name?: string };

/** A request as the router has read it. */
type ContractInput = {
  /** path parameters, percent-decoded */
  params: Record<string, string>;
  query: URLSearchParams;
  /** lower-cased header names */
  headers: Record<string, string>;
  body: Buffer;
};

/** What one operation of a document demands of a request. */
export type OperationContract = {
  operationId: string;
  /** The 401 error when the request lacks the credential the operation's `security` asks for. */
  checkCredential(headers: Record<string, string>): HttpError | undefined;
  /** The 400 (or 415) error when a parameter or the body does not fit the document. */
  validate(input: ContractInput): HttpError | undefined;
};

/** One area's document: its operations by path template and method. */
export type AreaContract = {
  /** The operation at `path` (a template such as `/pet/{petId}`), or undefined when the document has none. */
  operation(path: string, method: string): OperationContract | undefined;
};

const FORMATS_BY_MEDIA_TYPE: Record<string, BodyFormat> = {
  'application/json': 'json',
  'application/xml': 'xml',
  'application/x-www-form-urlencoded': 'form',
};

function documentError(area: Area, message: string): Error {
  return new Error(`emulator: schema/${area}.openapi.yaml: ${message}`);
}

/** Reads a `#/a/b` pointer inside the document. */
function resolvePointer(root: unknown, ref: string, area: Area): unknown {
  return resolveIn(root, ref, (message) => documentError(area, message));
}

/** A parameter, request body or security scheme, following its `$ref`. */
function deref(root: unknown, value: unknown, area: Area): Record<string, unknown> {
  return derefIn(root, value, (message) => documentError(area, message));
}

/** The schema a `$ref`/`allOf` stands for, as far as coercion needs it: its type, properties and items. */
function effective(root: unknown, schema: SchemaObject | undefined, area: Area): SchemaObject {
  if (schema === undefined) return {};
  // The document is the project's own and checked by Ajv when compiled; this reads its structure.
  if (schema.$ref) return effective(root, resolvePointer(root, schema.$ref, area) as SchemaObject, area);
  if (schema.allOf) {
    const parts = schema.allOf.map((part) => effective(root, part, area));
    const properties = Object.fromEntries(parts.flatMap((part) => Object.entries(part.properties ?? {})));
    return { type: 'object', properties };
  }
  return schema;
}

/**
 * An XML or form tree (every leaf is text) as the JSON value the schema describes: numbers and
 * booleans from their text, wrapped XML lists and indexed form lists as arrays. An empty element
 * or field is an empty record, list or text, and otherwise means "not given".
 */
function fromTextTree(root: unknown, schema: SchemaObject | undefined, value: unknown, area: Area): unknown {
  const resolved = effective(root, schema, area);
  if (value === '' || value === undefined || value === null) {
    if (value !== '') return undefined;
    return resolved.type === 'object'
      ? {}
      : resolved.type === 'array'
        ? []
        : resolved.type === 'string'
          ? ''
          : undefined;
  }
  switch (resolved.type) {
    case 'object': {
      if (!isRecord(value)) return value;
      const properties = resolved.properties ?? {};
      const entries = Object.entries(value).map(
        ([name, item]) => [name, fromTextTree(root, properties[name], item, area)] as const,
      );
      return Object.fromEntries(entries.filter(([, item]) => item !== undefined));
    }
    case 'array': {
      const items = listItems(value);
      return Array.isArray(items)
        ? items.map((item) => fromTextTree(root, resolved.items, item, area)).filter((item) => item !== undefined)
        : items;
    }
    default:
      if (typeof value !== 'string') return value;
      return resolved.type === 'string' ? value : fromText(resolved, value.trim());
  }
}

/** `/tags/0/id` → `.tags[0].id`, how the messages name a place in a body. */
function jsonPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part.replace(/~1/g, '/').replace(/~0/g, '~')}`))
    .join('');
}

/**
 * How a failed check is worded. Two kinds of parameter error keep the reference server's own
 * words (its framework's conversion and enum messages), and a missing required body field keeps
 * the words the emulator always used for it, since clients and tests match on them; anything else
 * is `Request validation: <what>`.
 */
const wording = {
  conversion: (value: string, format: string | undefined) =>
    `Input error: couldn't convert \`${value}\` to type \`class java.lang.${format === 'int32' ? 'Integer' : 'Long'}\``,
  enumeration: (name: string, value: unknown, allowed: readonly unknown[]) =>
    // The missing backtick after the parameter's name is how the reference server words it.
    `Input error: query parameter \`${name} value \`${String(value)}\` is not in the allowable values ` +
    `\`[${allowed.join(', ')}]\``,
  required: (area: Area, field: string) =>
    area === 'plants' ? `${field} is required` : `Input error: ${field} is required`,
  other: (what: string) => `Request validation: ${what}`,
};

/** The area's 400 record: the pet store's `{code, message}` or the plant area's `{error, message}`. */
function badRequest(area: Area, message: string): HttpError {
  return area === 'plants' ? new HttpError(400, { error: 400, message }) : apiError(400, message);
}

type CompiledParameter = {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  explode: boolean;
  schema: SchemaObject;
  validate: ValidateFunction;
};
type CompiledBody = {
  mediaType: string;
  format: BodyFormat | undefined;
  schema: SchemaObject | undefined;
  validate: ValidateFunction | undefined;
};

/** A security scheme as a check of the request headers, with the words a 401 uses for it. */
type CredentialCheck = { check: (headers: Record<string, string>) => boolean; words: string; bearer: boolean };

/** A document's security schemes by name. */
function securityChecks(root: Record<string, unknown>, area: Area): Map<string, CredentialCheck> {
  const components = isRecord(root['components']) ? root['components'] : {};
  const schemes = isRecord(components['securitySchemes']) ? components['securitySchemes'] : {};
  return new Map(
    Object.entries(schemes).map(([name, raw]): [string, CredentialCheck] => {
      // The schemes are read as the document declares them; an unsupported one stops the start.
      const scheme = deref(root, raw, area) as SecurityScheme;
      if (scheme.type === 'http' && scheme.scheme?.toLowerCase() === 'bearer') {
        const check = (headers: Record<string, string>) =>
          /^bearer\s+\S/i.test((headers['authorization'] ?? '').trim());
        return [name, { check, words: 'an Authorization: Bearer token', bearer: true }];
      }
      if (scheme.type === 'apiKey' && scheme.in === 'header' && scheme.name) {
        const header = scheme.name.toLowerCase();
        const check = (headers: Record<string, string>) => (headers[header] ?? '').trim() !== '';
        return [name, { check, words: `an ${scheme.name} header`, bearer: false }];
      }
      throw documentError(area, `security scheme ${name} is not supported by the emulator`);
    }),
  );
}

/** An area's document as read: the area (for messages) and the document's root (for references). */
type AreaDocument = { area: Area; root: Record<string, unknown> };

/** What compiling the operations of a document needs: the document, its schemas and its security schemes. */
type AreaCompiler = AreaDocument & { compileSchema: CompileSchema; credentials: Map<string, CredentialCheck> };

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Reads and parses an area's document; one without paths stops the start. */
async function readDocument(area: Area): Promise<{ root: Record<string, unknown>; paths: Record<string, unknown> }> {
  const root: unknown = parse(await readFile(DOCUMENTS[area], 'utf8'));
  if (!isRecord(root) || !isRecord(root['paths'])) throw documentError(area, 'no paths');
  return { root, paths: root['paths'] };
}

/** An Ajv instance that knows the document's component schemas, as a compiler of the schemas that use them. */
function schemaCompiler({ area, root }: AreaDocument): CompileSchema {
  return compilerOf(root, `${area}.openapi.yaml`);
}

/** An operation's parameters, `raw` being the path item's followed by the operation's own. */
function compileParameters(
  { area, root, compileSchema }: AreaCompiler,
  operationId: string,
  raw: unknown[],
): CompiledParameter[] {
  // Parameters: the path item's, overridden by the operation's of the same name and place.
  const declared = new Map<string, Record<string, unknown>>();
  for (const item of raw) {
    const parameter = deref(root, item, area);
    declared.set(`${String(parameter['in'])}:${String(parameter['name'])}`, parameter);
  }
  return [...declared.values()].map((item) => {
    const parameter = item as ParameterObject;
    if (parameter.in !== 'path' && parameter.in !== 'query' && parameter.in !== 'header') {
      throw documentError(area, `${operationId}: ${parameter.in} parameters are not supported by the emulator`);
    }
    const schema = parameter.schema ?? {};
    return {
      name: parameter.name,
      in: parameter.in,
      required: parameter.in === 'path' || parameter.required === true,
      // Form style (the default in a query) explodes by default: one repeated parameter per item.
      explode: parameter.explode ?? (parameter.style ?? 'form') === 'form',
      schema,
      validate: compileSchema(schema),
    };
  });
}

/** An operation's request body, one entry per media type it takes. */
function compileBodies({ area, root, compileSchema }: AreaCompiler, raw: unknown): CompiledBody[] {
  const requestBody = raw === undefined ? undefined : (deref(root, raw, area) as RequestBodyObject);
  return Object.entries(requestBody?.content ?? {}).map(([mediaType, media]) => ({
    mediaType: mediaType.toLowerCase(),
    format: FORMATS_BY_MEDIA_TYPE[mediaType.toLowerCase()],
    schema: media.schema,
    validate: media.schema === undefined ? undefined : compileSchema(media.schema),
  }));
}

/** An operation's `security` as credential checks; an unknown scheme stops the start. */
function compileSecurity(
  { area, credentials }: AreaCompiler,
  operationId: string,
  requirements: readonly unknown[],
): CredentialCheck[][] {
  // Alternatives (any one will do), each a set of schemes that must all be present.
  return requirements.map((requirement: unknown) =>
    Object.keys(isRecord(requirement) ? requirement : {}).map(
      (name) =>
        credentials.get(name) ??
        ((): never => {
          throw documentError(area, `${operationId}: unknown security scheme ${name}`);
        })(),
    ),
  );
}

/** The 401 error when the headers meet none of the alternatives of `security`. */
function checkCredential(security: CredentialCheck[][], headers: Record<string, string>): HttpError | undefined {
  if (security.length === 0 || security.some((schemes) => schemes.every((scheme) => scheme.check(headers))))
    return undefined;
  const wanted = security.map((schemes) => schemes.map((scheme) => scheme.words).join(' and ')).join(' or ');
  const challenge = security.some((schemes) => schemes.some((scheme) => scheme.bearer))
    ? { 'www-authenticate': 'Bearer' }
    : undefined;
  // The message names what is missing and never repeats a received value.
  return apiError(401, `Missing credential: ${wanted} is required`, challenge);
}

/** One operation of the document, compiled. */
function compileOperation(
  compiler: AreaCompiler,
  operationId: string,
  operation: OperationObject,
  sharedParameters: unknown[],
  security: readonly unknown[],
): OperationContract {
  const parameters = compileParameters(compiler, operationId, [...sharedParameters, ...(operation.parameters ?? [])]);
  const bodies = compileBodies(compiler, operation.requestBody);
  const schemes = compileSecurity(compiler, operationId, security);
  return {
    operationId,
    checkCredential: (headers) => checkCredential(schemes, headers),
    validate(input) {
      for (const parameter of parameters) {
        const failure = validateParameter(compiler, parameter, input);
        if (failure !== undefined) return badRequest(compiler.area, failure);
      }
      return validateBody(compiler, bodies, input);
    },
  };
}

async function loadArea(area: Area): Promise<AreaContract> {
  const { root, paths } = await readDocument(area);
  const compileSchema = schemaCompiler({ area, root });
  const compiler: AreaCompiler = { area, root, compileSchema, credentials: securityChecks(root, area) };
  const defaultSecurity: unknown[] = Array.isArray(root['security']) ? root['security'] : [];
  const operations = new Map<string, OperationContract>();

  for (const [path, rawItem] of Object.entries(paths)) {
    const item = deref(root, rawItem, area);
    const shared: unknown[] = Array.isArray(item['parameters']) ? (item['parameters'] as unknown[]) : [];
    for (const method of METHODS) {
      const rawOperation = item[method];
      if (!isRecord(rawOperation)) continue;
      // The operation object is the project's own; its parts are checked as they are read.
      const operation = rawOperation as OperationObject;
      const operationId = operation.operationId ?? `${method.toUpperCase()} ${path}`;
      const security = operation.security ?? defaultSecurity;
      operations.set(
        `${method.toUpperCase()} ${path}`,
        compileOperation(compiler, operationId, operation, shared, security),
      );
    }
  }

  return { operation: (path, method) => operations.get(`${method.toUpperCase()} ${path}`) };
}

/** The message for a parameter that is missing or does not fit the document, if one does not. */
function validateParameter(
  { area, root }: AreaDocument,
  parameter: CompiledParameter,
  input: ContractInput,
): string | undefined {
  const place = `${parameter.in} parameter ${parameter.name}`;
  const schema = effective(root, parameter.schema, area);
  const itemSchema = effective(root, schema.items, area);
  // Empty values count as not given, as the operations read them.
  let texts: string[];
  if (parameter.in === 'query') {
    const all = input.query.getAll(parameter.name);
    texts = (schema.type === 'array' && !parameter.explode ? all.flatMap((value) => value.split(',')) : all)
      .map((value) => value.trim())
      .filter((value) => value !== '');
  } else {
    const value = parameter.in === 'path' ? input.params[parameter.name] : input.headers[parameter.name.toLowerCase()];
    texts = value === undefined || value === '' ? [] : [value];
  }
  if (texts.length === 0) return parameter.required ? wording.other(`${place} is required`) : undefined;

  const [first = ''] = texts;
  const value = schema.type === 'array' ? texts.map((text) => fromText(itemSchema, text)) : fromText(schema, first);
  if (parameter.validate(value)) return undefined;
  const [error] = parameter.validate.errors ?? [];
  if (error === undefined) return wording.other(`${place} is invalid`);
  const failing = schema.type === 'array' ? itemSchema : schema;
  if (error.keyword === 'type' && failing.type === 'integer')
    return wording.conversion(String(error.data), failing.format);
  if (error.keyword === 'enum' && parameter.in === 'query')
    return wording.enumeration(parameter.name, error.data, allowedValues(error));
  return wording.other(`${place}${jsonPath(error.instancePath)} ${describe(error)}`);
}

/** The 400 or 415 error for a body that does not fit the document, if it does not. */
function validateBody(
  { area, root }: AreaDocument,
  bodies: CompiledBody[],
  input: ContractInput,
): HttpError | undefined {
  if (bodies.length === 0) return undefined;
  const mediaType = mediaTypeOf(input.headers['content-type']);
  const body = bodies.find((candidate) => candidate.mediaType === mediaType);
  const sentSomething = input.body.length > 0;
  if (body === undefined) {
    // A body in a media type the operation does not take; no body at all is the operation's to answer.
    return sentSomething ? apiError(415, 'HTTP 415 Unsupported Media Type') : undefined;
  }
  if (body.format === undefined || body.validate === undefined) return undefined;
  let tree: unknown;
  try {
    tree = decodeBody(input.body, input.headers['content-type'], [body.format]);
  } catch (error) {
    // A body that cannot be parsed at all is left to the operation, which answers it in the reference server's words.
    if (error instanceof UnreadableBody) return undefined;
    if (error instanceof HttpError) return error;
    throw error;
  }
  // No body: whether one is needed is the operation's to answer, in the reference server's words.
  if (tree === undefined) return undefined;
  const value = body.format === 'json' ? plainJson(tree) : fromTextTree(root, body.schema, tree, area);
  if (body.validate(value)) return undefined;
  const [error] = body.validate.errors ?? [];
  if (error === undefined) return badRequest(area, wording.other('body is invalid'));
  if (error.keyword === 'required' && error.instancePath === '')
    return badRequest(area, wording.required(area, String(error.params['missingProperty'])));
  return badRequest(area, wording.other(`body${jsonPath(error.instancePath)} ${describe(error)}`));
}

/** Ajv's words for a failure, with the allowed values of an enum. */
function describe(error: ErrorObject): string {
  const message = error.message ?? 'is invalid';
  return error.keyword === 'enum' ? `${message}: ${allowedValues(error).join(', ')}` : message;
}

function allowedValues(error: ErrorObject): readonly unknown[] {
  const allowed: unknown = error.params['allowedValues'];
  return Array.isArray(allowed) ? (allowed as unknown[]) : [];
}

let loading: Promise<Record<Area, AreaContract>> | undefined;

/**
 * The contracts of both areas, read and compiled on the first emulator start of the process
 * (the documents are part of the source tree; a change needs a restart, like a code change).
 */
export function loadContracts(): Promise<Record<Area, AreaContract>> {
  loading ??= Promise.all([loadArea('petstore'), loadArea('plants')]).then(([petstore, plants]) => ({
    petstore,
    plants,
  }));
  // A failed load (a broken document) is not cached, so the next start reports it again.
  loading.catch(() => (loading = undefined));
  return loading;
}
