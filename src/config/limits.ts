/**
 * The limits every request is held to: body and upload sizes, batches, the shape and cost of an
 * operation, list arguments, upstream calls per operation, and requests per minute.
 */
import { integer, type Setting } from './parse.js';

/** How large, deep, costly and frequent a request may be. */
export const LIMIT_SETTINGS = [
  {
    key: 'requestMaxBytes',
    env: 'REQUEST_MAX_BYTES',
    default: String(1024 * 1024),
    description: 'largest request body that is not an upload, in bytes',
    details:
      'largest request body that is not an upload (413 `PAYLOAD_TOO_LARGE`); a multipart upload may be up to ' +
      '`UPLOAD_MAX_FILES` × `UPLOAD_MAX_BYTES` + this',
    parse: integer(1, 2 ** 31),
  },
  {
    key: 'uploadMaxBytes',
    env: 'UPLOAD_MAX_BYTES',
    default: String(10 * 1024 * 1024),
    description: 'largest uploaded file, in bytes',
    details: 'largest uploaded file; a larger one is cut off while streaming and the upstream call aborted',
    parse: integer(1, 2 ** 31),
  },
  {
    key: 'uploadMaxFiles',
    env: 'UPLOAD_MAX_FILES',
    default: '5',
    description: 'most files in one multipart upload request',
    details: 'most files in one multipart request (413 `PAYLOAD_TOO_LARGE`)',
    parse: integer(1, 100),
  },
  {
    key: 'batchMaxOperations',
    env: 'BATCH_MAX_OPERATIONS',
    default: '0',
    description: 'most operations in one batched request (a JSON array body); 0 turns batching off',
    details: 'most operations in one batched request (a JSON array body); `0`: batches are refused (400)',
    parse: integer(0, 1000),
  },
  {
    key: 'queryMaxDepth',
    env: 'QUERY_MAX_DEPTH',
    default: '10',
    description: 'deepest nesting of fields in an operation',
    details: 'deepest nesting of fields in an operation (400 `QUERY_TOO_DEEP`)',
    parse: integer(1, 1000),
  },
  {
    key: 'queryMaxAliases',
    env: 'QUERY_MAX_ALIASES',
    default: '50',
    description: 'most aliases in an operation',
    details: 'most aliases in an operation (400 `TOO_MANY_ALIASES`; `0`: none)',
    parse: integer(0, 100_000),
  },
  {
    key: 'queryMaxTokens',
    env: 'QUERY_MAX_TOKENS',
    default: '2000',
    description: 'most tokens (names, punctuation, values) in a document',
    details: 'most tokens in a document, counted while parsing (400 `TOO_MANY_TOKENS`)',
    parse: integer(1, 10_000_000),
  },
  {
    key: 'inputMaxDepth',
    env: 'INPUT_MAX_DEPTH',
    default: '100',
    description:
      'deepest nesting of arrays and objects in variables and extensions, of brackets in a document, and of ' +
      'fragments spreading one another (checked before parsing)',
    // graphql-js parses recursively: past about 1,500 levels its stack overflows.
    details:
      "deepest nesting in variables, extensions, a document's brackets and fragment spreads, checked before " +
      'parsing (400 `INPUT_TOO_DEEP`)',
    parse: integer(1, 500),
  },
  {
    key: 'queryMaxDirectives',
    env: 'QUERY_MAX_DIRECTIVES',
    default: '20',
    description: 'most directives in an operation',
    details: 'most directives in an operation (400 `TOO_MANY_DIRECTIVES`; `0`: none)',
    parse: integer(0, 100_000),
  },
  {
    key: 'queryMaxCost',
    env: 'QUERY_MAX_COST',
    default: '1000',
    description: 'highest estimated cost of an operation (1 per scalar, 2 per object, times 1.5 per level)',
    details:
      'highest estimated cost of an operation (400 `QUERY_TOO_COSTLY`); see [Security](security.md) for the cost model',
    parse: integer(1, 100_000_000),
  },
  {
    key: 'listArgumentMaxItems',
    env: 'LIST_ARGUMENT_MAX_ITEMS',
    default: '100',
    description: 'most items in one list argument (pets ids, tags, statuses, users, photo URLs)',
    details:
      'most items in one list argument (`pets(ids)`, `petsByTags(tags)`, `petsByStatus(status)`, ' +
      '`createUsers(input)`, `photoUrls`, `tags`): `BAD_USER_INPUT` before any upstream call',
    parse: integer(1, 1_000_000),
  },
  {
    key: 'upstreamMaxCallsPerOperation',
    env: 'UPSTREAM_MAX_CALLS_PER_OPERATION',
    default: '200',
    description: 'most upstream calls one operation makes; further calls fail with UPSTREAM_FANOUT_LIMIT',
    details:
      'most upstream calls one operation makes: over it by estimate, refused before any call ' +
      '(`COST_ESTIMATED_TOO_EXPENSIVE`); past it while running, `UPSTREAM_FANOUT_LIMIT`',
    parse: integer(1, 1_000_000),
  },
  {
    key: 'rateLimitPerMinute',
    env: 'RATE_LIMIT_PER_MINUTE',
    default: '0',
    description: 'requests per minute of one client (its credential, else its address); 0: no limit',
    details:
      'requests per minute of one client (its credential, else its address): 429 `RATE_LIMITED`; `0`: no ' +
      'limit. See [Rate limits](security.md#rate-limits)',
    parse: integer(0, 100_000_000),
  },
  {
    key: 'rateLimitAddressPerMinute',
    env: 'RATE_LIMIT_ADDRESS_PER_MINUTE',
    default: '0',
    description: 'requests per minute from one address, whatever credentials they carry; 0: no limit',
    details: 'requests per minute from one address whatever credentials they carry; `0`: no limit per address',
    parse: integer(0, 100_000_000),
  },
  {
    key: 'rateLimitCostPerMinute',
    env: 'RATE_LIMIT_COST_PER_MINUTE',
    default: '0',
    description: 'upstream calls per minute of one client (its credential, else its address); 0: no limit',
    details:
      'upstream calls a client (credential, else address) may make per minute, charged by estimate and ' +
      'refunded after; `0`: no budget. See [Demand control](security.md#demand-control)',
    parse: integer(0, 100_000_000),
  },
  {
    key: 'trustProxyHops',
    env: 'TRUST_PROXY_HOPS',
    default: '0',
    description: 'proxies in front of the gateway whose X-Forwarded-For entry gives the client address',
    details:
      "proxies in front of the gateway whose `X-Forwarded-For` entry gives the client's address (`0`: the " +
      "connection's address)",
    parse: integer(0, 10),
  },
] as const satisfies readonly Setting[];
