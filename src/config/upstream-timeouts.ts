/**
 * The twelve upstream timeout settings: a call's deadline and its three phases (connect, headers, body),
 * shared by both areas and per area. The configuration holds them resolved, one object per area (see load.ts).
 */
import { integer, type Setting } from './parse.js';

/** An upstream call's deadline and the timeouts of its phases, shared and per area. */
export const UPSTREAM_TIMEOUT_SETTINGS = [
  {
    key: 'upstreamTimeoutMs',
    env: 'UPSTREAM_TIMEOUT_MS',
    default: '10000',
    description: 'deadline of one upstream call, connect to last byte, retries included, in milliseconds',
    details:
      'deadline of one upstream call, retries and the waits between them included; also bounds each phase ' +
      'below that is not set',
    parse: integer(1, 600_000),
  },
  {
    key: 'upstreamConnectTimeoutMs',
    env: 'UPSTREAM_CONNECT_TIMEOUT_MS',
    default: undefined,
    description: 'time to connect to an upstream (TCP and TLS), in milliseconds (default: the call deadline)',
    details:
      'time to open a connection to an upstream (TCP, and TLS for `https`); unset: only the call deadline bounds it',
    parse: integer(1, 600_000),
  },
  {
    key: 'upstreamHeadersTimeoutMs',
    env: 'UPSTREAM_HEADERS_TIMEOUT_MS',
    default: undefined,
    description: 'time from sending a request to the response headers, in milliseconds (default: the call deadline)',
    details:
      'time from sending a request to the response headers (checked on a clock of about half a second); ' +
      'unset: the call deadline',
    parse: integer(1, 600_000),
  },
  {
    key: 'upstreamBodyTimeoutMs',
    env: 'UPSTREAM_BODY_TIMEOUT_MS',
    default: undefined,
    description: 'time from the response headers to the last body byte, in milliseconds (default: the call deadline)',
    details:
      'time from the response headers to the last body byte, however steadily the body trickles; unset: only ' +
      'the call deadline bounds it',
    parse: integer(1, 600_000),
  },
  {
    key: 'petstoreTimeoutMs',
    env: 'PETSTORE_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_TIMEOUT_MS for the pet store only',
    details: 'the call deadline of that area only; unset: `UPSTREAM_TIMEOUT_MS`',
    parse: integer(1, 600_000),
  },
  {
    key: 'petstoreConnectTimeoutMs',
    env: 'PETSTORE_CONNECT_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_CONNECT_TIMEOUT_MS for the pet store only',
    details: 'the connect timeout of that area only; unset: `UPSTREAM_CONNECT_TIMEOUT_MS`',
    parse: integer(1, 600_000),
  },
  {
    key: 'petstoreHeadersTimeoutMs',
    env: 'PETSTORE_HEADERS_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_HEADERS_TIMEOUT_MS for the pet store only',
    details: 'the headers timeout of that area only; unset: `UPSTREAM_HEADERS_TIMEOUT_MS`',
    parse: integer(1, 600_000),
  },
  {
    key: 'petstoreBodyTimeoutMs',
    env: 'PETSTORE_BODY_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_BODY_TIMEOUT_MS for the pet store only',
    details: 'the whole-body timeout of that area only; unset: `UPSTREAM_BODY_TIMEOUT_MS`',
    parse: integer(1, 600_000),
  },
  {
    key: 'plantsTimeoutMs',
    env: 'PLANTS_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_TIMEOUT_MS for the plant area only',
    details: 'the call deadline of that area only; unset: `UPSTREAM_TIMEOUT_MS`',
    parse: integer(1, 600_000),
  },
  {
    key: 'plantsConnectTimeoutMs',
    env: 'PLANTS_CONNECT_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_CONNECT_TIMEOUT_MS for the plant area only',
    details: 'the connect timeout of that area only; unset: `UPSTREAM_CONNECT_TIMEOUT_MS`',
    parse: integer(1, 600_000),
  },
  {
    key: 'plantsHeadersTimeoutMs',
    env: 'PLANTS_HEADERS_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_HEADERS_TIMEOUT_MS for the plant area only',
    details: 'the headers timeout of that area only; unset: `UPSTREAM_HEADERS_TIMEOUT_MS`',
    parse: integer(1, 600_000),
  },
  {
    key: 'plantsBodyTimeoutMs',
    env: 'PLANTS_BODY_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_BODY_TIMEOUT_MS for the plant area only',
    details: 'the whole-body timeout of that area only; unset: `UPSTREAM_BODY_TIMEOUT_MS`',
    parse: integer(1, 600_000),
  },
] as const satisfies readonly Setting[];
