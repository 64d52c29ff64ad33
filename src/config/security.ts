/**
 * Settings of who may call and what may run: CSRF prevention, CORS origins, trusted documents and
 * automatic persisted queries.
 */
import { flag, integer, origins, type Setting } from './parse.js';

/** CSRF prevention, CORS, trusted documents and automatic persisted queries. */
export const SECURITY_SETTINGS = [
  {
    key: 'csrfPrevention',
    env: 'CSRF_PREVENTION',
    default: 'true',
    description: 'require a CSRF header (x-graphql-csrf) on GET, form and multipart requests: true or false',
    details:
      'GET, form and multipart requests must carry a CSRF header such as `x-graphql-csrf: 1` (403 ' +
      '`CSRF_HEADER_REQUIRED`)',
    parse: flag,
  },
  {
    key: 'corsOrigins',
    env: 'CORS_ORIGINS',
    default: undefined,
    description: 'origins whose pages may call the gateway (comma-separated), or *; unset: same origin only',
    details:
      'origins whose pages may call the gateway, comma separated, or `*` (without credentials); unset: no ' +
      "CORS headers, only the gateway's own origin",
    parse: origins,
  },
  {
    key: 'trustedDocuments',
    env: 'TRUSTED_DOCUMENTS',
    default: undefined,
    description: 'path of a trusted documents manifest (JSON: hash -> document); set: only those documents run',
    details:
      'path of a trusted documents manifest (JSON: hash → document); set, only those documents run, by hash; ' +
      'unset: any document runs. See [Trusted documents](trusted-documents.md)',
    parse: (raw: string) => raw,
  },
  {
    key: 'apq',
    env: 'APQ',
    default: 'true',
    description:
      'automatic persisted queries (Apollo APQ): a document sent once with its sha256 hash runs by hash after; ' +
      'true or false (off while TRUSTED_DOCUMENTS is set)',
    details:
      'automatic persisted queries: a document sent once with its SHA-256 hash runs by hash afterwards; off ' +
      'while `TRUSTED_DOCUMENTS` is set. See [Persisted queries](graph.md#persisted-queries)',
    parse: flag,
  },
  {
    key: 'apqMaxDocuments',
    env: 'APQ_MAX_DOCUMENTS',
    default: '1000',
    description: 'most APQ documents kept in this process (without REDIS_URL); the least recently used go first',
    details:
      'most APQ documents one process keeps, each 24 h at most, least recently used first out (in Redis with ' +
      '`REDIS_URL`)',
    parse: integer(1, 1_000_000),
  },
] as const satisfies readonly Setting[];
