/**
 * The tools a developer uses and production turns off (GraphiQL, introspection, explain), and
 * NODE_ENV, which switches their defaults.
 */
import { flag, type Setting } from './parse.js';

/** GraphiQL, introspection and explain, and NODE_ENV, which turns them off by default in production. */
export const DEVELOPMENT_SETTINGS = [
  {
    key: 'graphiql',
    env: 'GRAPHIQL',
    default: 'true',
    productionDefault: 'false',
    description:
      'serve GraphiQL at /graphql to browsers: true or false (false with TRUSTED_DOCUMENTS, which it cannot use)',
    details:
      'serve GraphiQL at `/graphql` to browsers; `true` with `TRUSTED_DOCUMENTS` is refused at start (GraphiQL ' +
      'sends documents as text)',
    parse: flag,
  },
  {
    key: 'introspection',
    env: 'INTROSPECTION',
    default: 'true',
    productionDefault: 'false',
    description: 'answer introspection (__schema, __type) and the federation SDL (_service): true or false',
    details:
      'answer `__schema`, `__type` and the federation SDL (`_service`); off, they are refused with ' +
      '`INTROSPECTION_DISABLED` and "Did you mean" suggestions are hidden. See [Security](security.md)',
    parse: flag,
  },
  {
    key: 'explain',
    env: 'EXPLAIN',
    default: 'true',
    productionDefault: 'false',
    description:
      'answer a request that sends x-gateway-explain: 1 with extensions.upstream (its upstream calls): true or false',
    details:
      'a request that sends `x-gateway-explain: 1` gets `extensions.upstream`, each upstream call it made; ' +
      'off, the header is ignored. See [Explain](operations.md#explain-what-a-query-costs-the-upstream)',
    parse: flag,
  },
  {
    key: 'nodeEnv',
    env: 'NODE_ENV',
    default: 'development',
    description: 'production: INTROSPECTION, GRAPHIQL and EXPLAIN default to false',
    details:
      '`production` switches the defaults of `INTROSPECTION`, `GRAPHIQL` and `EXPLAIN` to `false` (a value you ' +
      'set wins)',
    parse: (raw: string) => raw,
  },
] as const satisfies readonly Setting[];
