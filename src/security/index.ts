/**
 * The gateway's protections, assembled from the configuration: what yoga is given as options
 * and plugins, the list-argument bound on the schema, and the upstream call budget of each
 * operation. Each protection lives in its own module; this one only wires them.
 */
import type { GraphQLSchema } from 'graphql';
import type { YogaServerOptions } from 'graphql-yoga';
import type { Config } from '../config/index.js';
import { named, type NamedPlugin } from '../plugins/named.js';
import { corsOptions, useCsrfPrevention } from './cross-site.js';
import { checkRepresentations } from './entities.js';
import { createMemoryCostBudgetStore, type CostBudgetStore } from './cost-budget.js';
import { useDemandControl, type DemandControlOptions } from './demand-control.js';
import { UpstreamCallBudget } from './fan-out.js';
import { limitListArguments } from './list-arguments.js';
import { useInputDepthLimit } from './input-depth.js';
import { useQueryLimits, type ValidateCheck, type ValidateHook } from './query-limits.js';
import { createRateLimiter, useRateLimit, type RateLimiter, type RateLimitStore } from './rate-limit.js';
import { useSecretRedaction, useVariableErrorCode } from './redaction.js';
import { useRequestBodyLimits } from './request-body.js';
import { loadTrustedDocuments, useTrustedDocuments, type TrustedDocuments } from './trusted-documents.js';

/** The settings the protections read. */
export type SecurityConfig = Pick<
  Config,
  | 'requestMaxBytes'
  | 'uploadMaxBytes'
  | 'batchMaxOperations'
  | 'queryMaxDepth'
  | 'queryMaxAliases'
  | 'queryMaxTokens'
  | 'inputMaxDepth'
  | 'queryMaxDirectives'
  | 'queryMaxCost'
  | 'listArgumentMaxItems'
  | 'upstreamMaxCallsPerOperation'
  | 'rateLimitPerMinute'
  | 'rateLimitAddressPerMinute'
  | 'rateLimitCostPerMinute'
  | 'trustProxyHops'
  | 'csrfPrevention'
  | 'corsOrigins'
  | 'introspection'
  | 'graphiql'
  | 'trustedDocuments'
>;

/** The protections of one gateway. */
export type Security = {
  /** yoga options: CORS, GraphiQL, batching; its body limit is replaced by {@link Security.plugins}' */
  yogaOptions: Pick<
    YogaServerOptions<Record<string, unknown>, Record<string, unknown>>,
    'cors' | 'graphiql' | 'batching' | 'maxRequestBodySize'
  >;
  /**
   * yoga plugins, each under its name (src/plugins/named.ts), to come after the streaming uploads
   * plugin (the body limit wraps its parser)
   */
  plugins: NamedPlugin[];
  /** applies the list-argument bound and the check of federation representations to the schema */
  schema(schema: GraphQLSchema): GraphQLSchema;
  /** a fresh upstream call budget, for one operation */
  budget(): UpstreamCallBudget;
  /**
   * the rate limits (undefined when off), for the HTTP lane to check before it reads a request; the
   * plugin shares its buckets
   */
  rateLimiter: RateLimiter | undefined;
  /** the trusted documents manifest, with TRUSTED_DOCUMENTS: the HTTP lane serves its documents by hash too */
  trustedDocuments: TrustedDocuments | undefined;
};

/** What the protections are built with, beside the configuration. */
export type SecurityParts = {
  /** most files one upload request may carry (UPLOAD_MAX_FILES) */
  maxFiles: number;
  /** where rate limits are counted (Redis, with REDIS_URL); else in this process */
  rateLimitStore?: RateLimitStore | undefined;
  /** where callers' budgets of upstream calls are kept (Redis, with REDIS_URL); else in this process */
  costBudgetStore?: CostBudgetStore | undefined;
  /** given each executed operation's estimated and actual upstream calls (/metrics) */
  observeCost?: ((estimated: number, actual: number) => void) | undefined;
  /** other plugins' hooks that only add validation rules: they run with the limits' rules, once per document */
  validationHooks?: readonly ValidateHook[];
  /** other plugins' refusals that depend on the request (its Accept, its variables): made before the document's kept result */
  validationChecks?: readonly ValidateCheck[];
  /**
   * the secrets of a request being served, as its record gathers them (src/observability/): its
   * credentials, and the passwords its variables and document sent; the redaction clears them from its errors
   */
  secretsOf: (request: Request) => readonly string[];
};

/**
 * Builds the protections. Reads the trusted documents manifest when one is configured.
 * @throws ConfigError when the manifest cannot be used
 */
export function createSecurity(config: SecurityConfig, parts: SecurityParts): Security {
  const { rateLimitStore, validationHooks = [], validationChecks = [] } = parts;
  const trusted = config.trustedDocuments === undefined ? undefined : loadTrustedDocuments(config.trustedDocuments);
  const limits = {
    perMinute: config.rateLimitPerMinute,
    perAddressPerMinute: config.rateLimitAddressPerMinute,
    trustProxyHops: config.trustProxyHops,
    ...(rateLimitStore ? { store: rateLimitStore } : {}),
  };
  const rateLimiter = createRateLimiter(limits);
  const plugins: NamedPlugin[] = [
    // First: a refused client costs no parsing.
    ...named('rate-limit', useRateLimit(limits, rateLimiter)),
    ...(config.csrfPrevention ? named('csrf-prevention', useCsrfPrevention()) : []),
    ...named(
      'request-body-limits',
      useRequestBodyLimits({
        maxBytes: config.requestMaxBytes,
        maxMultipartBytes: parts.maxFiles * config.uploadMaxBytes + config.requestMaxBytes,
      }),
    ),
    ...(trusted ? named('trusted-documents', useTrustedDocuments(trusted)) : []),
    ...named(
      'query-limits',
      useQueryLimits(
        {
          maxDepth: config.queryMaxDepth,
          maxAliases: config.queryMaxAliases,
          maxTokens: config.queryMaxTokens,
          maxDirectives: config.queryMaxDirectives,
          maxCost: config.queryMaxCost,
          introspection: config.introspection,
        },
        validationHooks,
        validationChecks,
      ),
    ),
    // Before the plugins that walk variables (redaction, the response cache's key, the log).
    ...named('input-depth', useInputDepthLimit(config.inputMaxDepth)),
    // The operation's upstream calls estimated before it runs: refused over the limits, shown to those who ask.
    ...named('demand-control', useDemandControl(demandControl(config, parts))),
    ...named('variable-error-code', useVariableErrorCode()),
    ...named('secret-redaction', useSecretRedaction(parts.secretsOf)),
  ];
  return {
    yogaOptions: {
      cors: corsOptions(config.corsOrigins),
      graphiql: config.graphiql,
      batching: config.batchMaxOperations > 0 ? { limit: config.batchMaxOperations } : false,
      maxRequestBodySize: false,
    },
    plugins,
    schema: (schema) => checkRepresentations(limitListArguments(schema, config.listArgumentMaxItems)),
    budget: () => new UpstreamCallBudget(config.upstreamMaxCallsPerOperation),
    rateLimiter,
    trustedDocuments: trusted,
  };
}

/** Demand control's options: the calls one operation may make, and each client's budget when RATE_LIMIT_COST_PER_MINUTE is on. */
function demandControl(config: SecurityConfig, parts: SecurityParts): DemandControlOptions {
  const { costBudgetStore, observeCost } = parts;
  return {
    maxCalls: config.upstreamMaxCallsPerOperation,
    ...(config.rateLimitCostPerMinute > 0
      ? {
          budget: {
            perMinute: config.rateLimitCostPerMinute,
            store: costBudgetStore ?? createMemoryCostBudgetStore(),
            trustProxyHops: config.trustProxyHops,
          },
        }
      : {}),
    ...(observeCost ? { observe: observeCost } : {}),
  };
}
