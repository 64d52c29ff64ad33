/**
 * Reading OpenAPI 3.0 documents, shared by the emulator (which validates requests against the
 * project's documents), the upstream check (`scripts/check-upstream.ts`, which compares an
 * upstream's document with them) and the run-time sampling of upstream answers: references, the
 * operations of a document, and one Ajv compiler per document whose component schemas every
 * compiled schema can reach.
 */
import { Ajv, type Options, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';
import { isLosslessNumber } from 'lossless-json';

/** A parsed document, or any object inside one. */
export type OpenApiObject = Record<string, unknown>;

export function isRecord(value: unknown): value is OpenApiObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The HTTP methods an OpenAPI path item may hold, in the order the documents list them. */
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

/** Reads a `#/a/b` pointer inside `root`; `fail` words the error when it cannot be followed. */
export function resolvePointer(root: unknown, ref: string, fail: (message: string) => Error): unknown {
  if (!ref.startsWith('#/')) throw fail(`only local references are supported, got ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, part) => {
      if (!isRecord(node) || !Object.hasOwn(node, part)) throw fail(`unresolved reference ${ref}`);
      return node[part];
    }, root);
}

/** `value`, or what its `$ref` points at (followed until it is not a reference), as an object. */
export function deref(root: unknown, value: unknown, fail: (message: string) => Error): OpenApiObject {
  let resolved = value;
  // A chain of references ends; a loop of them is a broken document, stopped after a few steps.
  for (let steps = 0; isRecord(resolved) && typeof resolved['$ref'] === 'string'; steps += 1) {
    if (steps > 20) throw fail(`reference loop at ${resolved['$ref']}`);
    resolved = resolvePointer(root, resolved['$ref'], fail);
  }
  if (!isRecord(resolved)) throw fail('expected an object');
  return resolved;
}

/**
 * Points a schema's component references (`#/components/schemas/X`) at the definitions
 * registered in Ajv under `id` (`<id>#/definitions/X`); with an empty `id`, at the definitions of
 * the schema they sit in.
 */
function rebase(value: unknown, id: string): unknown {
  if (Array.isArray(value)) return value.map((item) => rebase(item, id));
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      key === '$ref' && typeof item === 'string'
        ? item.replace(/^#\/components\/schemas\//, `${id}#/definitions/`)
        : rebase(item, id),
    ]),
  );
}

/**
 * The JSON value of a decoded JSON tree, LosslessNumbers as numbers for the validator. An int64
 * beyond 2^53 loses digits here, which does not change whether it is an integer.
 */
export function plainJson(value: unknown): unknown {
  if (isLosslessNumber(value)) return Number(value.value);
  if (Array.isArray(value)) return value.map(plainJson);
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plainJson(item)]));
  return value;
}

/** Compiles a schema of the document (a parameter's, a body's, an answer's) into a validator. */
export type CompileSchema = (schema: unknown) => ValidateFunction;

/**
 * An Ajv instance that knows the document's component schemas, as a compiler of the schemas that
 * use them. `id` names the document inside Ajv (any unique text).
 */
export function schemaCompiler(root: OpenApiObject, id: string, options: Options = {}): CompileSchema {
  const components = isRecord(root['components']) ? root['components'] : {};
  const ajv = new Ajv({ strict: true, allErrors: false, verbose: true, ...options });
  formats.default(ajv, ['date-time', 'int32', 'int64', 'binary']);
  // Annotations of OpenAPI schema objects that JSON Schema does not define.
  ajv.addKeyword({ keyword: 'example' });
  ajv.addKeyword({ keyword: 'xml' });
  // The component schemas, registered once; the schemas of parameters and bodies reach them through rebase().
  ajv.addSchema({ $id: id, definitions: rebase(components['schemas'] ?? {}, '') });
  return (schema: unknown): ValidateFunction =>
    ajv.compile(isRecord(schema) ? (rebase(schema, id) as OpenApiObject) : {});
}

/** One operation of a document, as {@link operationsOf} lists it. */
export type OperationEntry = {
  /** `GET /pet/{petId}` */
  key: string;
  method: string;
  /** the path template as the document writes it */
  path: string;
  operation: OpenApiObject;
  /** the path item's own parameters, which the operation's own override */
  sharedParameters: unknown[];
};

/** Every operation of a document, in document order. */
export function operationsOf(root: OpenApiObject, fail: (message: string) => Error): OperationEntry[] {
  const paths = isRecord(root['paths']) ? root['paths'] : {};
  return Object.entries(paths).flatMap(([path, rawItem]) => {
    const item = deref(root, rawItem, fail);
    const sharedParameters: unknown[] = Array.isArray(item['parameters']) ? (item['parameters'] as unknown[]) : [];
    return METHODS.flatMap((method) => {
      const operation = item[method];
      if (!isRecord(operation)) return [];
      return [
        { key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, operation, sharedParameters },
      ];
    });
  });
}
