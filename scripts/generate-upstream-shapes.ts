/**
 * Generates `src/__generated__/upstream-shapes.ts` from the project's OpenAPI documents
 * (`schema/petstore.openapi.yaml`, `schema/plants.openapi.yaml`), so that the payload shapes of
 * `src/upstream` (which drive decoding, encoding and the payload types) cannot drift from the
 * documents the emulator validates against and Prism mocks. Run by `npm run codegen`.
 *
 * For each component schema, in document order (a schema another one uses comes first):
 * - an object (or an `allOf` of objects) → `XShape = object(xmlName, {...})`, fields in document order;
 * - an array → `XShape = list(itemShape, xmlItemName)`;
 * - a string enum → `enum X { VALUE = 'value' }`;
 * - a map (`additionalProperties` only) → `XPayload = Record<string, ...>`.
 * A schema with `writeOnly` fields (a user's password) is sent with them and read without them
 * (and one with `readOnly` fields the other way round): it gets `XSentShape`, the record as sent,
 * and `XReadShape`, the record as read, and so does every schema that contains one.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { parse } from 'yaml';

const DOCUMENTS = ['schema/petstore.openapi.yaml', 'schema/plants.openapi.yaml'] as const;
const OUTPUT = 'src/__generated__/upstream-shapes.ts';
/** Paths are relative to the project, wherever the script is run from. */
const PROJECT = new URL('../', import.meta.url);

/** The parts of an OpenAPI 3.0 schema object this generator reads. */
type Schema = {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  allOf?: Schema[];
  writeOnly?: boolean;
  readOnly?: boolean;
  xml?: { name?: string };
};

type Component = { name: string; document: string; schema: Schema };

/**
 * Which side of the wire a shape describes: `writeOnly` fields only travel in requests, `readOnly`
 * ones only in answers.
 */
type Side = 'sent' | 'read';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(message: string): never {
  throw new Error(`generate-upstream-shapes: ${message}`);
}

/** Reads `components.schemas` of one document, keeping the document's order. */
function readComponents(document: string): Component[] {
  const root: unknown = parse(readFileSync(new URL(document, PROJECT), 'utf8'));
  const schemas = isRecord(root) && isRecord(root['components']) ? root['components']['schemas'] : undefined;
  if (!isRecord(schemas)) fail(`${document} has no components.schemas`);
  // The YAML is read as plain data; the shape of each schema is checked where it is used.
  return Object.entries(schemas).map(([name, schema]) => ({ name, document, schema: schema as Schema }));
}

const components = DOCUMENTS.flatMap(readComponents);
const byName = new Map<string, Component>();
for (const component of components) {
  const existing = byName.get(component.name);
  if (existing) fail(`schema ${component.name} is defined in both ${existing.document} and ${component.document}`);
  byName.set(component.name, component);
}

function target(ref: string): Component {
  const name = /^#\/components\/schemas\/([^/]+)$/.exec(ref)?.[1];
  const component = name === undefined ? undefined : byName.get(name);
  return component ?? fail(`unsupported or unknown $ref ${ref}`);
}

function lowerFirst(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

/** The element name of a record in XML: its `xml.name`, else the schema's name in lower camel case. */
function xmlNameOf(component: Component): string {
  return component.schema.xml?.name ?? lowerFirst(component.name);
}

/** The properties of an object schema, `allOf` parts merged in order. */
function propertiesOf(schema: Schema, where: string): [string, Schema][] {
  if (schema.$ref) return propertiesOf(target(schema.$ref).schema, schema.$ref);
  if (schema.allOf) return schema.allOf.flatMap((part, index) => propertiesOf(part, `${where}.allOf[${index}]`));
  if (schema.type !== 'object' || !schema.properties) fail(`${where} is not an object with properties`);
  return Object.entries(schema.properties);
}

type Kind = 'object' | 'list' | 'enum' | 'map' | 'scalar';

function kindOf(schema: Schema): Kind {
  if (schema.$ref) return kindOf(target(schema.$ref).schema);
  if (schema.allOf) return 'object';
  if (schema.type === 'array') return 'list';
  if (schema.type === 'object') return schema.properties ? 'object' : 'map';
  if (schema.type === 'string' && schema.enum) return 'enum';
  return 'scalar';
}

/** The codec builder of a scalar schema. */
function scalar(schema: Schema, where: string): string {
  const builder = scalarBuilder(schema, where);
  builders.add(builder);
  return builder;
}

function scalarBuilder(schema: Schema, where: string): string {
  switch (schema.type) {
    case 'integer':
      // Without a width an integer is read as int64, the wider and exact one.
      return schema.format === 'int32' ? 'int32' : 'int64';
    case 'string':
      return schema.format === 'date-time' ? 'datetime' : 'string';
    case 'boolean':
      return 'boolean';
    default:
      return fail(`${where}: type ${String(schema.type)} has no codec builder`);
  }
}

/** Whether a schema, or one it contains, has fields that exist on one side of the wire only. */
function isOneSided(schema: Schema, seen = new Set<string>()): boolean {
  if (schema.$ref) {
    const component = target(schema.$ref);
    if (seen.has(component.name)) return false;
    seen.add(component.name);
    return isOneSided(component.schema, seen);
  }
  if (schema.writeOnly || schema.readOnly) return true;
  const parts = [
    ...(schema.allOf ?? []),
    ...Object.values(schema.properties ?? {}),
    ...(schema.items ? [schema.items] : []),
  ];
  return parts.some((part) => isOneSided(part, seen));
}

/** The name of the generated constant for a component on one side. */
function shapeName(component: Component, side: Side): string {
  if (!isOneSided(component.schema)) return `${component.name}Shape`;
  return side === 'read' ? `${component.name}ReadShape` : `${component.name}SentShape`;
}

const emitted = new Set<string>();
const output: string[] = [];
/** The codec builders the emitted shapes use, so that only those are imported. */
const builders = new Set<string>();

/** The expression of a schema used inside another shape, emitting the components it refers to first. */
function expression(schema: Schema, side: Side, where: string, fallbackXmlName: string, indent: string): string {
  if (schema.$ref) {
    const component = target(schema.$ref);
    const kind = kindOf(component.schema);
    // An enum travels as its text; the enum type only names the allowed values.
    if (kind === 'enum') return 'string';
    if (kind === 'scalar') return scalar(component.schema, schema.$ref);
    if (kind === 'map') fail(`${where}: a map inside a shape has no codec builder`);
    emit(component, side);
    return shapeName(component, side);
  }
  switch (kindOf(schema)) {
    case 'object':
      return objectExpression(schema, side, where, schema.xml?.name ?? fallbackXmlName, indent);
    case 'list': {
      const items = schema.items ?? fail(`${where}: array without items`);
      const itemXmlName = items.xml?.name ?? (items.$ref ? xmlNameOf(target(items.$ref)) : 'item');
      builders.add('list');
      return `list(${expression(items, side, `${where}[]`, itemXmlName, indent)}, ${quote(itemXmlName)})`;
    }
    case 'enum':
      return 'string';
    case 'map':
      return fail(`${where}: a map inside a shape has no codec builder`);
    case 'scalar':
      return scalar(schema, where);
  }
}

function objectExpression(schema: Schema, side: Side, where: string, xmlName: string, indent: string): string {
  const fields = propertiesOf(schema, where)
    .filter(([, property]) => !(side === 'read' ? property.writeOnly : property.readOnly))
    .map(
      ([name, property]) =>
        `${indent}  ${key(name)}: ${expression(property, side, `${where}.${name}`, name, `${indent}  `)},`,
    );
  builders.add('object');
  return `object(${quote(xmlName)}, {\n${fields.join('\n')}\n${indent}})`;
}

function key(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : quote(name);
}

function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The width a comment's lines wrap at: Prettier's (.prettierrc.json), which wraps the code but not the comments. */
const COMMENT_WIDTH = 120;

/** A schema's description, and where it comes from, as a JSDoc comment wrapped at {@link COMMENT_WIDTH}. */
function comment(component: Component, note?: string): string {
  const sentences = [component.schema.description, note]
    .map((text) => text?.trim().replace(/\s+/g, ' ').replace(/\*\//g, '*\\/').replace(/[.:]$/, ''))
    .filter((text): text is string => Boolean(text))
    .map((text) => `${text.charAt(0).toUpperCase()}${text.slice(1)}.`);
  const source = `From \`${component.document}\`, \`#/components/schemas/${component.name}\`.`;
  const text = [...sentences, source].join(' ');
  if (text.length + '/**  */'.length <= COMMENT_WIDTH) return `/** ${text} */`;
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines.length - 1;
    if (last >= 0 && ` * ${lines[last]} ${word}`.length <= COMMENT_WIDTH) lines[last] += ` ${word}`;
    else lines.push(word);
  }
  return ['/**', ...lines.map((line) => ` * ${line}`), ' */'].join('\n');
}

function enumMember(value: string): string {
  const name = value.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase();
  return /^[A-Z_]/.test(name) ? name : `_${name}`;
}

function tsScalarType(schema: Schema, where: string): string {
  const builder = scalarBuilder(schema, where);
  return builder === 'int32' ? 'number' : builder === 'boolean' ? 'boolean' : 'string';
}

function emit(component: Component, side: Side): void {
  const name = shapeName(component, side);
  if (emitted.has(name)) return;
  emitted.add(name);
  const { schema } = component;
  const where = `${component.document}#/components/schemas/${component.name}`;
  switch (kindOf(schema)) {
    case 'enum': {
      const values = (schema.enum ?? []).map((value) =>
        typeof value === 'string' ? value : fail(`${where}: enum value ${String(value)} is not a string`),
      );
      output.push(
        comment(component),
        `export enum ${component.name} {`,
        ...values.map((value) => `  ${enumMember(value)} = ${quote(value)},`),
        '}',
        '',
      );
      return;
    }
    case 'map': {
      const values = schema.additionalProperties;
      if (!isRecord(values)) fail(`${where}: a map needs an additionalProperties schema`);
      output.push(
        comment(component),
        `export type ${component.name}Payload = Record<string, ${tsScalarType(values, `${where}.additionalProperties`)}>;`,
        '',
      );
      return;
    }
    case 'scalar':
      return fail(`${where}: a scalar component has no shape; use it inline`);
    case 'object':
    case 'list': {
      // Compute the expression first: it emits the shapes this one refers to, which must come first.
      const text =
        kindOf(schema) === 'object'
          ? objectExpression(schema, side, where, xmlNameOf(component), '')
          : expression(schema, side, where, xmlNameOf(component), '');
      const note = isOneSided(schema)
        ? side === 'sent'
          ? 'As sent (with its write-only fields)'
          : 'As read (without its write-only fields)'
        : undefined;
      const payload = name.replace(/Shape$/, 'Payload');
      output.push(
        comment(component, note),
        `export const ${name} = ${text};`,
        `export type ${payload} = Payload<typeof ${name}>;`,
        '',
      );
      return;
    }
  }
}

for (const component of components) {
  emit(component, 'sent');
  if (isOneSided(component.schema)) emit(component, 'read');
}

const imports = [...builders].sort().concat(emitted.size > 0 ? ['type Payload'] : []);
const text = [
  '/* Generated by scripts/generate-upstream-shapes.ts from schema/*.openapi.yaml: do not edit, run `npm run codegen`. */',
  `import { ${imports.join(', ')} } from '../upstream/codec.js';`,
  '',
  ...output,
]
  .join('\n')
  .trimEnd();
// Written as Prettier writes it (the project's settings), as codegen.ts has the resolver types written.
const path = fileURLToPath(new URL(OUTPUT, PROJECT));
writeFileSync(path, await format(`${text}\n`, { ...(await resolveConfig(path)), filepath: path }));
console.log(`generate-upstream-shapes: wrote ${OUTPUT} (${emitted.size} declarations)`);
