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
      'interface to listen on: loopback outside production (GraphiQL has demo credentials there); ' +
      'containers set `0.0.0.0`',
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
      'on `SIGTERM` or `SIGINT`, how long requests in flight get to finish before they are cut (`0`: at ' +
      'once); whatever hangs, the process exits by this + 1.6 s. See [Stopping](operations.md#stopping)',
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
      "GraphQL answers larger than this many bytes are compressed (brotli, else gzip) when the client's " +
      '`Accept-Encoding` asks; `0`: never',
    parse: integer(0, 2 ** 31),
  },
] as const satisfies readonly Setting[];
