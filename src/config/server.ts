/**
 * Settings of the server itself: where it listens, how it stops, when it compresses its answers.
 */
import { integer, type Setting } from './parse.js';

/** Where the gateway listens, how long a stop waits for requests in flight, and which answers are compressed. */
export const SERVER_SETTINGS = [
  {
    key: 'host',
    env: 'HOST',
    // Outside production GraphiQL has demo credentials and mutations are open: loopback only, unless asked.
    default: '127.0.0.1',
    productionDefault: '0.0.0.0',
    description: 'interface to listen on (0.0.0.0: every interface, as a container needs)',
    details:
      'interface to listen on: loopback only outside production (GraphiQL has demo credentials there); a ' +
      'container sets `0.0.0.0`, as the Dockerfile and `deploy/` do',
    parse: (raw: string) => raw,
  },
  {
    key: 'port',
    env: 'PORT',
    default: '4000',
    description: 'port to listen on (0 picks a free one)',
    details: 'port to listen on (0 picks a free one)',
    parse: integer(0, 65535),
  },
  {
    key: 'shutdownGraceMs',
    env: 'SHUTDOWN_GRACE_MS',
    default: '10000',
    description: 'on SIGTERM/SIGINT, time in-flight requests get to finish, in milliseconds',
    details:
      'on `SIGTERM` or `SIGINT` the gateway stops listening; a keep-alive connection that carries one more ' +
      'request gets it answered with `Connection: close`, idle ones are closed after min(1 s, half this); ' +
      'requests in flight get this long to finish, then are cut (`0`: at once). Then the upstream pools, Redis ' +
      'and tracing close, and the process exits 0. Whatever hangs, it exits by this + 1.6 s (a cluster primary ' +
      '+ 1.8 s, killing stuck workers), with code 1 when the stop did not end cleanly. A second signal cuts at ' +
      'once. See [Stopping](operations.md#stopping)',
    parse: integer(0, 600_000),
  },
  {
    key: 'responseCompressionMinBytes',
    env: 'RESPONSE_COMPRESSION_MIN_BYTES',
    // Up to 1 KB an answer and its headers fit in one TCP segment whatever its coding: compressing saves no round trip.
    default: '1024',
    description:
      'GraphQL answers larger than this many bytes are compressed (br, else gzip) for clients whose Accept-Encoding ' +
      'asks; 0: never (the GraphiQL page is compressed whatever this says)',
    details:
      "GraphQL answers larger than this many bytes are compressed when the client's `Accept-Encoding` asks " +
      '(brotli at quality 1, else gzip at level 1), on both HTTP paths, with `Vary: Accept-Encoding`; smaller ' +
      'ones are sent as they are. `0`: never. The GraphiQL page is compressed once and sent with an `ETag` (a ' +
      'reload is a 304) whatever this says',
    parse: integer(0, 2 ** 31),
  },
] as const satisfies readonly Setting[];
