/**
 * Settings of live queries (`query @live`): on or off, how many may be open, how often the upstream
 * reads they watch are polled.
 */
import { flag, integer, type Setting } from './parse.js';

/** Live queries: on or off, how many, how often their reads are polled. */
export const LIVE_QUERY_SETTINGS = [
  {
    key: 'liveQueries',
    env: 'LIVE_QUERIES',
    default: 'false',
    description:
      'live queries: `query @live` over server-sent events or graphql-ws is answered again whenever what it shows ' +
      'changes; true or false',
    details:
      'answer `query @live { … }` again whenever what it shows changes (server-sent events or graphql-ws); ' +
      'off by default, as each holds a connection and polls the upstream. See [Live ' +
      'queries](live-queries.md)',
    parse: flag,
  },
  {
    key: 'liveQueriesMax',
    env: 'LIVE_QUERIES_MAX',
    default: '1000',
    description: 'most live queries open in one process; more are refused with LIVE_QUERY_LIMIT',
    details: 'most live queries open in one process (each worker); more are refused with `LIVE_QUERY_LIMIT`',
    parse: integer(1, 1_000_000),
  },
  {
    key: 'liveQueriesPerClientMax',
    env: 'LIVE_QUERIES_PER_CLIENT_MAX',
    default: '10',
    description:
      'most live queries one client (its credential, else its address) has open in one process; more are refused ' +
      'with LIVE_QUERY_LIMIT',
    details:
      'most live queries one client (its credential, else its address) has open in one process; more get ' +
      '`LIVE_QUERY_LIMIT`',
    parse: integer(1, 100_000),
  },
  {
    key: 'livePollIntervalMs',
    env: 'LIVE_POLL_INTERVAL_MS',
    default: '5000',
    description:
      'how often the upstream reads that live queries watch are polled for changes made behind the gateway, in ' +
      'milliseconds',
    details:
      'how often each upstream read a live query watches is polled, once per read and credential however ' +
      'many watch it',
    parse: integer(100, 3_600_000),
  },
  {
    key: 'livePollMaxPerSecond',
    env: 'LIVE_POLL_MAX_PER_SECOND',
    default: '20',
    description: 'most polls per second sent to each upstream area for live queries; the rest wait for the next round',
    details:
      'most polls per second sent to each upstream area for live queries; the reads polled longest ago go ' +
      'first, the rest wait for the next round',
    parse: integer(1, 10_000),
  },
] as const satisfies readonly Setting[];
