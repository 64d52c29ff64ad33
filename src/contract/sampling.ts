/**
 * Run-time contract sampling: a fraction of the upstream answers (UPSTREAM_CONTRACT_SAMPLE) is
 * checked against the response schema of its operation in the gateway's OpenAPI documents, so
 * that an upstream that drifts from them (a string where an integer is declared, a required field
 * dropped, an enum value nobody declared) shows in the metrics and the log before it shows as
 * errors. A mismatch never changes the answer; it is counted in
 * `upstream_contract_mismatches_total{service,operation,path}` and logged once per operation and
 * path (per gateway, which is one per process), naming what was expected, never the value (it
 * could be personal data).
 *
 * Cost: an answer that is not picked costs one comparison with a random number; the schemas are
 * compiled once per process, the first time a gateway samples.
 */
import { readFileSync } from 'node:fs';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { projectFile } from '../project-files.js';
import type { UpstreamClient, UpstreamRequest, UpstreamResponse } from '../upstream/http.js';
import { usesOf, type Area } from './graphql-impact.js';
import { deref, isRecord, operationsOf, plainJson, schemaCompiler, type OpenApiObject } from './openapi.js';

/** The validators of an area's answers: by operationId, then by status (`200`, `2XX`, `default`). */
type AnswerValidators = Map<string, Map<string, ValidateFunction>>;

/** Distinct mismatch paths an operation gets label values for; further ones count as `other`. */
export const MAX_PATHS_PER_OPERATION = 50;

const compiled = new Map<Area, AnswerValidators>();

function documentError(area: Area, message: string): Error {
  return new Error(`contract sampling: schema/${area}.openapi.yaml: ${message}`);
}

/** Compiles the JSON answer schemas of the operations the gateway uses in `area`, once per process. */
export function answerValidators(area: Area): AnswerValidators {
  const found = compiled.get(area);
  if (found) return found;
  const fail = (message: string) => documentError(area, message);
  const root: unknown = parse(readFileSync(projectFile(`schema/${area}.openapi.yaml`), 'utf8'));
  if (!isRecord(root)) throw fail('not a document');
  // allErrors: every mismatch of an answer is counted, not just the first.
  const compile = schemaCompiler(root, `${area}.answers`, { allErrors: true });
  const uses = usesOf(area);
  const validators: AnswerValidators = new Map();
  for (const { operation } of operationsOf(root, fail)) {
    const operationId = operation['operationId'];
    if (typeof operationId !== 'string' || uses[operationId]?.answer === undefined) continue;
    validators.set(operationId, statusValidators(root, operation, compile, fail));
  }
  compiled.set(area, validators);
  return validators;
}

function statusValidators(
  root: OpenApiObject,
  operation: OpenApiObject,
  compile: (schema: unknown) => ValidateFunction,
  fail: (message: string) => Error,
): Map<string, ValidateFunction> {
  const responses = isRecord(operation['responses']) ? operation['responses'] : {};
  const byStatus = new Map<string, ValidateFunction>();
  for (const [status, raw] of Object.entries(responses)) {
    // Only successful answers reach the code that reads them; a failure is an error before.
    if (!/^2(\d\d|XX)$/i.test(status)) continue;
    const content = deref(root, raw, fail)['content'];
    const media = isRecord(content) ? content['application/json'] : undefined;
    if (isRecord(media) && media['schema'] !== undefined) byStatus.set(status.toUpperCase(), compile(media['schema']));
  }
  return byStatus;
}

/** `/tags/0/id` → `$.tags[*].id`: array indices as `*`, so that the label values stay few. */
export function mismatchPath(error: Pick<ErrorObject, 'instancePath' | 'keyword' | 'params'>): string {
  const parts = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => (/^\d+$/.test(part) ? '[*]' : `.${part.replace(/~1/g, '/').replace(/~0/g, '~')}`));
  const missing: unknown = error.params['missingProperty'];
  if (error.keyword === 'required' && typeof missing === 'string') parts.push(`.${missing}`);
  return `$${parts.join('')}`;
}

/** What was expected at a mismatch, in Ajv's words (which never quote the value). */
function expected(error: ErrorObject): string {
  const allowed: unknown = error.params['allowedValues'];
  const message = error.message ?? 'is invalid';
  return error.keyword === 'enum' && Array.isArray(allowed) ? `${message}: ${allowed.join(', ')}` : message;
}

/**
 * An int64 beyond 2^53 reaches the validator as its decimal text (the decoder keeps it exact that
 * way): not a mismatch.
 */
function isExactInteger(error: ErrorObject): boolean {
  const schema: unknown = error.parentSchema;
  return (
    error.keyword === 'type' &&
    isRecord(schema) &&
    schema['type'] === 'integer' &&
    typeof error.data === 'string' &&
    /^-?\d{16,}$/.test(error.data)
  );
}

/** What the sampler reports to. */
export type SamplingOptions = {
  /** the fraction of answers checked, 0 to 1 (UPSTREAM_CONTRACT_SAMPLE) */
  fraction: number;
  log: Logger;
  metrics: Metrics | undefined;
  /** @default Math.random */
  random?: () => number;
};

/** Checks a sample of each client's answers (see the module's comment). */
export class ContractSampler {
  private readonly options: SamplingOptions;
  private readonly random: () => number;
  /** `operation path` pairs already logged */
  private readonly logged = new Set<string>();
  /** the paths that have label values, by operation */
  private readonly paths = new Map<string, Set<string>>();

  constructor(options: SamplingOptions) {
    this.options = options;
    this.random = options.random ?? Math.random;
  }

  /** `client`, with a sample of its answers checked; `client` itself when sampling is off. */
  wrap(client: UpstreamClient): UpstreamClient {
    const { fraction } = this.options;
    if (fraction <= 0) return client;
    // Compiled now, at the gateway's start, so that a broken document stops it there.
    const validators = answerValidators(client.service);
    return {
      service: client.service,
      close: () => client.close(),
      request: (call) => {
        const answer = client.request(call);
        // The one cost of an answer that is not picked.
        if (this.random() >= fraction) return answer;
        return answer.then((response) => {
          this.check(client.service, validators, call, response);
          return response;
        });
      },
    };
  }

  private check(service: Area, validators: AnswerValidators, call: UpstreamRequest, response: UpstreamResponse): void {
    // Unread bodies, answers without a body, and XML (whose values are all text until decoded) are not checked.
    if (call.ignoreBody === true || response.body === undefined || /xml/i.test(call.headers?.['accept'] ?? '')) return;
    const byStatus = validators.get(call.operation);
    const validate = byStatus?.get(String(response.status)) ?? byStatus?.get('2XX');
    if (validate === undefined || validate(plainJson(response.body))) return;
    const seen = new Set<string>();
    for (const error of validate.errors ?? []) {
      if (isExactInteger(error)) continue;
      const path = this.pathLabel(call.operation, mismatchPath(error));
      if (seen.has(path)) continue;
      seen.add(path);
      this.options.metrics?.observeContractMismatch(service, call.operation, path);
      this.logOnce(service, call.operation, path, expected(error));
    }
  }

  private pathLabel(operation: string, path: string): string {
    let known = this.paths.get(operation);
    if (known === undefined) this.paths.set(operation, (known = new Set()));
    if (known.has(path)) return path;
    if (known.size >= MAX_PATHS_PER_OPERATION) return 'other';
    known.add(path);
    return path;
  }

  private logOnce(service: Area, operation: string, path: string, what: string): void {
    const key = `${operation} ${path}`;
    if (this.logged.has(key)) return;
    this.logged.add(key);
    this.options.log.warn(
      { service, operation, path, expected: what },
      `${service} answered ${operation} with a body that does not fit its document at ${path} (${what}); ` +
        'the answer goes on as it would without the check; further mismatches there are counted in upstream_contract_mismatches_total',
    );
  }
}
