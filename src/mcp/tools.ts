/**
 * MCP tools from GraphQL operation documents: each named operation of a folder of `.graphql` files
 * is one tool, read and checked once at start. The tool's name is the operation's, its input
 * schema comes from the operation's variables (input-schema.ts), its description from the comment
 * above the operation or else the schema's description of its root fields, its annotations from
 * its kind and from the REST operations it calls (their rows in src/upstream/operations.ts), and
 * the credential it needs from the same rows' `security`, through the fields' upstream costs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Kind,
  OperationTypeNode,
  parse,
  print,
  TypeInfo,
  validate,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { Security } from '../credentials.js';
import { UPSTREAM_COSTS } from '../resolvers/upstream-costs.js';
import { operationRow, type OperationRow } from '../upstream/operations.js';
import { projectFile } from '../project-files.js';
import { operationInputSchema, type JsonSchema } from './input-schema.js';

/** The folder of the tools the gateway ships, from the project root. */
const DEFAULT_OPERATIONS = 'schema/mcp';

/** What an agent is told of a tool's behaviour (MCP tool annotations; hints, never guarantees). */
type ToolAnnotations = {
  title: string;
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint: boolean;
};

/** The credential headers a tool's REST operations need: every one of `all`, and one of each `oneOf`. */
type NeededCredentials = { all: ('apiKey' | 'bearer')[]; oneOf: ('apiKey' | 'bearer')[][] };

/** One tool: a named GraphQL operation. */
export type McpTool = {
  name: string;
  description: string;
  kind: 'query' | 'mutation';
  inputSchema: JsonSchema;
  annotations: ToolAnnotations;
  /** the operation and the fragments it spreads, as one GraphQL document */
  document: string;
  /** the credentials its upstream calls need, by their `security` */
  credentials: NeededCredentials;
  /** with TRUSTED_DOCUMENTS: the hash the manifest knows its document by, which the call sends instead of the text */
  trustedHash?: string;
};

/** Which operations become tools. */
type ToolOptions = {
  /** a folder of `.graphql` files (MCP_OPERATIONS); relative paths from the working directory. @default schema/mcp of the project */
  folder?: string | undefined;
  /** the mutations that become tools (MCP_MUTATIONS): their names, or 'all'. @default none */
  mutations: readonly string[] | 'all';
  /** the TRUSTED_DOCUMENTS manifest (hash → document), when set: every tool's document must be in it */
  trusted?: ReadonlyMap<string, string> | undefined;
};

/**
 * Reads the tools of a folder, checked against the executable schema.
 * @throws Error naming the file and the operation when one cannot be a tool
 */
export function loadTools(schema: GraphQLSchema, options: ToolOptions): McpTool[] {
  const folder = options.folder ?? fileURLToPath(projectFile(`${DEFAULT_OPERATIONS}/`));
  const files = readdirSync(folder)
    .filter((name) => name.endsWith('.graphql'))
    .sort();
  if (files.length === 0) throw new Error(`${folder} holds no .graphql file`);
  const operations: { file: string; operation: OperationDefinitionNode; source: string }[] = [];
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const file of files) {
    const source = readFileSync(join(folder, file), 'utf8');
    let document: DocumentNode;
    try {
      document = parse(source);
    } catch (error) {
      throw new Error(`${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
      else if (definition.kind === Kind.OPERATION_DEFINITION) operations.push({ file, operation: definition, source });
    }
  }
  const tools = operations.map(({ file, operation, source }) => {
    try {
      return toolOf(schema, operation, fragments, source);
    } catch (error) {
      throw new Error(`${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) throw new Error(`two operations are named ${tool.name}`);
    names.add(tool.name);
  }
  const served = chosen(tools, options.mutations);
  return options.trusted ? served.map((tool) => trustedTool(tool, options.trusted ?? new Map())) : served;
}

/**
 * A tool whose document the trusted documents manifest holds, with its hash: only the manifest's
 * documents run, so a tool's call names its document by hash as any client's would.
 * @throws Error when the manifest does not hold it
 */
function trustedTool(tool: McpTool, trusted: ReadonlyMap<string, string>): McpTool {
  const wanted = normalised(tool.document);
  for (const [hash, document] of trusted) if (normalised(document) === wanted) return { ...tool, trustedHash: hash };
  throw new Error(
    `${tool.name}: TRUSTED_DOCUMENTS is set and its manifest does not hold this operation; add it to the manifest`,
  );
}

/** A document printed in one layout, its definitions in name order: equal for the same operation however written. */
function normalised(document: string): string {
  const definitions = parse(document).definitions.map((definition) => print(definition));
  return definitions.sort().join('\n');
}

/** The queries, and the mutations MCP_MUTATIONS names. */
function chosen(tools: McpTool[], mutations: readonly string[] | 'all'): McpTool[] {
  if (mutations !== 'all')
    for (const name of mutations)
      if (!tools.some((tool) => tool.kind === 'mutation' && tool.name === name))
        throw new Error(`MCP_MUTATIONS names ${name}, which is no mutation of the tools' operations`);
  return tools.filter((tool) => tool.kind === 'query' || mutations === 'all' || mutations.includes(tool.name));
}

/** One operation as a tool. */
function toolOf(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  source: string,
): McpTool {
  const name = operation.name?.value;
  if (name === undefined) throw new Error('an operation without a name cannot be a tool');
  if (operation.operation === OperationTypeNode.SUBSCRIPTION)
    throw new Error(`${name}: a subscription cannot be a tool`);
  const document: DocumentNode = {
    kind: Kind.DOCUMENT,
    definitions: [operation, ...spreadFragments(operation, fragments)],
  };
  const errors = validate(schema, document);
  if (errors.length > 0) throw new Error(`${name}: ${errors.map((error) => error.message).join('; ')}`);
  const { fields, rootFields, argumentDescriptions } = fieldsOf(schema, document);
  const rows = fields.flatMap((field) => restOperations(field));
  const kind = operation.operation === OperationTypeNode.MUTATION ? 'mutation' : 'query';
  return {
    name,
    description: leadingComment(source, operation) ?? rootDescription(schema, kind, rootFields) ?? name,
    kind,
    inputSchema: operationInputSchema(schema, operation, argumentDescriptions),
    annotations: annotationsOf(name, kind, rows),
    document: document.definitions.map((definition) => sourceOf(definition)).join('\n\n'),
    credentials: neededCredentials(rows.map((row) => row.security)),
  };
}

/** The text of a definition, as its file wrote it. */
function sourceOf(definition: { loc?: { source: { body: string }; start: number; end: number } | undefined }): string {
  const loc = definition.loc;
  if (loc === undefined) throw new Error('a definition without its source');
  return loc.source.body.slice(loc.start, loc.end);
}

/** The fragments an operation spreads, directly or through other fragments. */
function spreadFragments(
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): FragmentDefinitionNode[] {
  const found = new Map<string, FragmentDefinitionNode>();
  const pending: (OperationDefinitionNode | FragmentDefinitionNode)[] = [operation];
  for (let next = pending.pop(); next !== undefined; next = pending.pop())
    visit(next, {
      FragmentSpread(spread) {
        const name = spread.name.value;
        const fragment = fragments.get(name);
        if (fragment === undefined || found.has(name)) return;
        found.set(name, fragment);
        pending.push(fragment);
      },
    });
  return [...found.values()];
}

/**
 * Every field the document selects, as `Type.field`; its root fields; and, for each variable
 * passed straight to an argument, that argument's description.
 */
function fieldsOf(
  schema: GraphQLSchema,
  document: DocumentNode,
): { fields: string[]; rootFields: string[]; argumentDescriptions: Map<string, string> } {
  const typeInfo = new TypeInfo(schema);
  const fields: string[] = [];
  const rootFields: string[] = [];
  const argumentDescriptions = new Map<string, string>();
  const roots = new Set([schema.getQueryType()?.name, schema.getMutationType()?.name]);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const parent = typeInfo.getParentType();
        if (!parent) return;
        fields.push(`${parent.name}.${node.name.value}`);
        if (roots.has(parent.name)) rootFields.push(node.name.value);
      },
      Argument(node) {
        const description = typeInfo.getArgument()?.description;
        if (node.value.kind === Kind.VARIABLE && description)
          argumentDescriptions.set(node.value.name.value, description);
      },
    }),
  );
  return { fields, rootFields, argumentDescriptions };
}

/** The rows of the REST operations a field's resolver may call (src/resolvers/upstream-costs.ts). */
function restOperations(field: string): OperationRow[] {
  return (UPSTREAM_COSTS[field] ?? []).flatMap((call) =>
    (typeof call.operation === 'string' ? [call.operation] : call.operation).flatMap(
      (operation) => operationRow(operation) ?? [],
    ),
  );
}

/** The `#` comment lines right above an operation, as one paragraph; undefined when there are none. */
function leadingComment(source: string, operation: OperationDefinitionNode): string | undefined {
  const start = operation.loc?.start ?? 0;
  const lines = source.slice(0, start).split('\n');
  // The operation's own line, up to where it begins, is not a comment.
  lines.pop();
  const comment: string[] = [];
  for (let line = lines.pop(); line !== undefined && line.trim().startsWith('#'); line = lines.pop())
    comment.unshift(line.trim().replace(/^#\s?/, ''));
  const text = comment.join(' ').replace(/\s+/g, ' ').trim();
  return text === '' ? undefined : text;
}

/** The schema's descriptions of the operation's root fields, one after the other. */
function rootDescription(schema: GraphQLSchema, kind: McpTool['kind'], rootFields: string[]): string | undefined {
  const root = kind === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  const text = rootFields
    .map((field) => root?.getFields()[field]?.description ?? '')
    .filter((description) => description !== '')
    .join(' ');
  return text === '' ? undefined : text;
}

/**
 * A query only reads; a mutation is destructive when one of its calls replaces or deletes (PUT,
 * DELETE) rather than adds (POST), and idempotent when none adds. Every call goes to the
 * gateway's own upstreams, a closed domain: not an open world.
 */
function annotationsOf(name: string, kind: McpTool['kind'], rows: readonly OperationRow[]): ToolAnnotations {
  const title = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2');
  if (kind === 'query') return { title, readOnlyHint: true, openWorldHint: false };
  const writes = rows.filter((row) => row.method !== 'GET');
  return {
    title,
    readOnlyHint: false,
    destructiveHint: writes.some((row) => row.method === 'PUT' || row.method === 'DELETE'),
    idempotentHint: !writes.some((row) => row.method === 'POST'),
    openWorldHint: false,
  };
}

/** The credentials a set of REST operations' securities need. */
function neededCredentials(securities: readonly Security[]): NeededCredentials {
  const all = new Set<'apiKey' | 'bearer'>();
  for (const security of securities) if (security === 'apiKey' || security === 'bearer') all.add(security);
  const eitherNeeded = securities.includes('apiKeyOrBearer') && all.size === 0;
  return { all: [...all].sort(), oneOf: eitherNeeded ? [['apiKey', 'bearer']] : [] };
}
