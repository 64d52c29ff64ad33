/**
 * Settings of the upstream REST areas: where they are (or the embedded emulator), the formats spoken,
 * the connection pools, the largest answer read and the sharing of identical calls in flight.
 */
import type { BodyFormat } from '../upstream/codec.js';
import { flag, integer, oneOf, type Setting, url } from './parse.js';

/** Where the upstream areas are, how the gateway talks to them, and how many connections it opens. */
export const UPSTREAM_SETTINGS = [
  {
    key: 'petstoreUrl',
    env: 'PETSTORE_URL',
    default: undefined,
    description:
      'pet store base URL, ending in /api/v3 (unset: the pet store is not served, or with PLANTS_URL unset too, ' +
      'the embedded emulator)',
    details:
      'pet store base URL, ending in `/api/v3`; unset: not served (`UPSTREAM_NOT_SERVED`), or the emulator if ' +
      '`PLANTS_URL` is unset too',
    parse: url,
  },
  {
    key: 'plantsUrl',
    env: 'PLANTS_URL',
    default: undefined,
    description:
      'plant area base URL (unset: the plant area is not served, or with PETSTORE_URL unset too, the embedded ' +
      'emulator)',
    details:
      'plant area base URL (`POST {PLANTS_URL}/plants`); unset: not served (`UPSTREAM_NOT_SERVED`), or the ' +
      'emulator if `PETSTORE_URL` is unset too',
    parse: url,
  },
  {
    key: 'emulator',
    env: 'EMULATOR',
    default: undefined,
    description:
      'true: serve the embedded emulator whatever the URLs say; false: never (unset: when neither URL is set, ' +
      'outside production)',
    details:
      "`true`: serve the embedded emulator's demo data, even in production; `false`: never (a URL " +
      'required); unset: when neither URL is set, outside production',
    parse: flag,
  },
  {
    key: 'petstoreBodyFormat',
    env: 'PETSTORE_BODY_FORMAT',
    default: 'json',
    description: 'body format of POST/PUT /pet, POST /store/order, POST /user, PUT /user/{username}: json, xml or form',
    details:
      'body of `POST /pet`, `PUT /pet`, `POST /store/order`, `POST /user`, `PUT /user/{username}`: `json`, ' +
      '`xml` or `form`',
    parse: oneOf<BodyFormat>('json', 'xml', 'form'),
  },
  {
    key: 'petstoreAccept',
    env: 'PETSTORE_ACCEPT',
    default: 'json',
    description: 'response format asked of the pet store: json or xml',
    details: 'response format asked of the pet store: `json` or `xml`',
    parse: oneOf('json', 'xml'),
  },
  {
    key: 'upstreamConnections',
    env: 'UPSTREAM_CONNECTIONS',
    default: '32',
    description: 'parallel connections (and calls) per upstream',
    details: 'parallel connections, and so parallel calls, per upstream; more calls queue',
    parse: integer(1, 1024),
  },
  {
    key: 'upstreamMaxResponseBytes',
    env: 'UPSTREAM_MAX_RESPONSE_BYTES',
    default: String(10 * 1024 * 1024),
    description: 'largest upstream response body, in bytes',
    details:
      'largest upstream response body read; a larger one is refused (`invalid-response`) and its connection ' +
      'closed',
    parse: integer(1, 2 ** 31),
  },
  {
    key: 'upstreamDedupe',
    env: 'UPSTREAM_DEDUPE',
    default: 'true',
    description:
      'identical upstream GETs in flight at the same time (same URL, Accept and credential) share one call: true or ' +
      'false',
    details:
      'identical upstream `GET`s in flight at once share one call (same area, path, query, `Accept` and ' +
      'credential); `false`: one call each. See [Shared in-flight ' +
      'calls](performance.md#shared-in-flight-calls)',
    parse: flag,
  },
] as const satisfies readonly Setting[];
