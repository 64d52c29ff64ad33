/**
 * The nesting limit on what a client sends (INPUT_MAX_DEPTH): arrays and objects in variables
 * and extensions, brackets in the document (selection sets, list and object literals, argument
 * lists), and chains of fragments that spread one another.
 *
 * Why: the code that reads a request walks it recursively — graphql-js's parser and validation,
 * the secret scan, the log's redaction, the response cache's key — and a few kilobytes of
 * `[[[[…]]]]` overflow the stack of any of them. Each check here is a loop that stops at the
 * limit, and runs before anything recursive sees the request: a refusal costs a scan, answers
 * 400 `INPUT_TOO_DEEP`, and logs the request's one line, without a stack.
 */
import { Kind, Source, type DocumentNode, type SelectionSetNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { codedError } from '../errors.js';

/**
 * Whether `value` nests arrays and objects more than `limit` levels deep (a scalar is level 0,
 * `[1]` and `{"a":1}` level 1). Iterative, and stops at the first path past the limit.
 */
export function valueNestsDeeper(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [current, depth] = next;
    if (depth > limit) return true;
    const items = Array.isArray(current) ? current : Object.values(current as object);
    for (const item of items) if (typeof item === 'object' && item !== null) pending.push([item, depth + 1]);
  }
  return false;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HASH = 0x23;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const BRACE_L = 0x7b;
const BRACKET_L = 0x5b;
const PAREN_L = 0x28;
const BRACE_R = 0x7d;
const BRACKET_R = 0x5d;
const PAREN_R = 0x29;

/**
 * Whether a GraphQL document's brackets (`{`, `[`, `(`) nest more than `limit` deep, outside
 * strings, block strings and comments. A scan of the text, for before the parser: the parser
 * recurses once per level and overflows the stack long before its token limit applies. An
 * unbalanced or otherwise broken document passes: the parser refuses it with its own message.
 */
export function documentNestsDeeper(source: string, limit: number): boolean {
  let depth = 0;
  for (let index = 0; index < source.length; index++) {
    const code = source.charCodeAt(index);
    // Runs on every request, cached documents included: plain comparisons, no lookups.
    if (code === BRACE_L || code === BRACKET_L || code === PAREN_L) {
      if (++depth > limit) return true;
    } else if (code === BRACE_R || code === BRACKET_R || code === PAREN_R) {
      depth--;
    } else if (code === HASH) {
      while (index + 1 < source.length && !isLineEnd(source.charCodeAt(index + 1))) index++;
    } else if (code === QUOTE) {
      index = source.startsWith('"""', index) ? blockStringEnd(source, index) : stringEnd(source, index);
    }
  }
  return false;
}

const isLineEnd = (code: number) => code === NEWLINE || code === CARRIAGE_RETURN;

/** Where the string opened at `start` closes (its last quote), or the end of its line. */
function stringEnd(source: string, start: number): number {
  for (let index = start + 1; index < source.length; index++) {
    const code = source.charCodeAt(index);
    if (code === BACKSLASH) index++;
    else if (code === QUOTE || isLineEnd(code)) return index;
  }
  return source.length;
}

/** Where the block string opened at `start` closes (its last quote); `\"""` does not close it. */
function blockStringEnd(source: string, start: number): number {
  for (let index = start + 3; index < source.length; index++) {
    if (source.charCodeAt(index) === BACKSLASH && source.startsWith('"""', index + 1)) index += 3;
    else if (source.startsWith('"""', index)) return index + 2;
  }
  return source.length;
}

/** The fragments each fragment of a document spreads, at any depth of its selections. */
function spreadsOf(selectionSet: SelectionSetNode): string[] {
  const spreads: string[] = [];
  const pending = [selectionSet];
  for (let set = pending.pop(); set !== undefined; set = pending.pop()) {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) spreads.push(selection.name.value);
      else if (selection.selectionSet) pending.push(selection.selectionSet);
    }
  }
  return spreads;
}

/**
 * Whether a chain of fragments spreading one another (`A` spreads `B`, which spreads `C`, …) is
 * longer than `limit`. graphql-js's cycle check and the depth limit follow such chains
 * recursively. A cycle counts as deep (validation refuses it anyway). Iterative: a fragment's
 * chain is measured once.
 */
export function fragmentsChainDeeper(document: DocumentNode, limit: number): boolean {
  const spreads = new Map<string, string[]>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION)
      spreads.set(definition.name.value, spreadsOf(definition.selectionSet));
  if (spreads.size <= limit) return false;
  // The longest chain from each fragment, found depth-first with an explicit stack.
  const longest = new Map<string, number>();
  const onPath = new Set<string>();
  for (const start of spreads.keys()) {
    const stack: string[] = [start];
    while (stack.length > 0) {
      const name = stack[stack.length - 1] as string;
      if (longest.has(name)) {
        stack.pop();
        continue;
      }
      const next = (spreads.get(name) ?? []).find((spread) => spreads.has(spread) && !longest.has(spread));
      if (next !== undefined) {
        if (onPath.has(next)) return true;
        onPath.add(name);
        stack.push(next);
        if (stack.length > limit) return true;
        continue;
      }
      const below = (spreads.get(name) ?? []).map((spread) => longest.get(spread) ?? 0);
      const length = 1 + Math.max(0, ...below);
      if (length > limit) return true;
      longest.set(name, length);
      onPath.delete(name);
      stack.pop();
    }
  }
  return false;
}

/** A parse's result that is a document (not the error of a parse that failed). */
function isDocument(value: unknown): value is DocumentNode {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === Kind.DOCUMENT;
}

/** The refusal: 400, whatever the Accept header (it is not a GraphQL parse or validation error). */
function tooDeep(what: string, limit: number) {
  return codedError('INPUT_TOO_DEEP', `${what} nest deeper than ${limit} levels (INPUT_MAX_DEPTH).`, {
    status: 400,
  });
}

/**
 * The yoga plugin: variables and extensions are checked as soon as the request's parameters are
 * read (it comes before every plugin that reads them); the document before graphql-js parses it,
 * and its fragments once parsed, whichever path the document came by (the request, a GET query
 * string, a persisted or trusted document).
 */
export function useInputDepthLimit(limit: number): Plugin {
  // Documents whose fragments were measured: the parse cache hands the same object back.
  const measured = new WeakSet<DocumentNode>();
  return {
    onParams({ params }) {
      if (valueNestsDeeper(params.variables, limit)) throw tooDeep('The variables', limit);
      if (valueNestsDeeper(params.extensions, limit)) throw tooDeep('The extensions', limit);
    },
    onParse({ params }) {
      const source: unknown = params.source;
      const text = typeof source === 'string' ? source : source instanceof Source ? source.body : '';
      if (documentNestsDeeper(text, limit)) throw tooDeep("The document's brackets", limit);
      return ({ result }) => {
        const parsed: unknown = result;
        if (!isDocument(parsed) || measured.has(parsed)) return;
        if (fragmentsChainDeeper(parsed, limit)) throw tooDeep("The document's fragment spreads", limit);
        measured.add(parsed);
      };
    },
  };
}
