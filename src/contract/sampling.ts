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
 * Cost: an answer that is not picked costs one comparison with a random number; the documents are
 * read once per process, just after the start, and an operation's schema is compiled once, the
 * first time one of its answers is picked.
 */
import { readFileSync } from 'node:fs';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { projectFile } from '../project-files.js';
import type { UpstreamClient, UpstreamRequest, UpstreamResponse } from '../upstream/http.js';
import type { Area } from './graphql-impact.js';
import {
  deref,
  isRecord,
  operationsOf,
  plainJson,
  schemaCompiler,
  type CompileSchema,
  type OpenApiObject,
} from './openapi.js';

/** Distinct mismatch paths an operation gets label values for; further ones count as `other`. */
const MAX_PATHS_PER_OPERATION = 50;

function documentError(area: Area, message: string): Error {
  return new Error(`contract sampling: schema/${area}.openapi.yaml: ${message}`);
}

/**
 * The JSON answer schemas of one area's operations, each compiled the first time an answer of its
 * operation is sampled, then kept for the process: the gateway's start pays nothing (compiling
 * them all took about 0.4 s), and an operation never sampled is never compiled.
 */
class AnswerSchemas {
  private readonly area: Area;
  private readonly fail: (message: string) => Error;
  private readonly root: OpenApiObject;
  private readonly compile: CompileSchema;
  /** each operation's successful responses, raw, by operationId */
  private readonly responses = new Map<string, OpenApiObject>();
  /** by operationId, then by status (`200`, `2XX`); undefined: no JSON schema for it */
  private readonly compiled = new Map<string, Map<string, ValidateFunction | undefined>>();

  constructor(area: Area) {
    this.area = area;
    this.fail = (message) => documentError(area, message);
    const root: unknown = parse(readFileSync(projectFile(`schema/${area}.openapi.yaml`), 'utf8'));
    if (!isRecord(root)) throw this.fail('not a document');
    this.root = root;
    // allErrors: every mismatch of an answer is counted, not just the first.
    this.compile = schemaCompiler(root, `${area}.answers`, { allErrors: true });
    for (const { operation } of operationsOf(root, this.fail)) {
      const operationId = operation['operationId'];
      if (typeof operationId === 'string' && isRecord(operation['responses']))
        this.responses.set(operationId, operation['responses']);
    }
  }

  /** The validator of `operationId`'s answers with `status`, or undefined when the document gives no JSON schema. */
  validator(operationId: string, status: number): ValidateFunction | undefined {
    let byStatus = this.compiled.get(operationId);
    if (byStatus === undefined)
      this.compiled.set(operationId, (byStatus = new Map<string, ValidateFunction | undefined>()));
    const key = String(status);
    if (!byStatus.has(key)) byStatus.set(key, this.compileFor(operationId, key));
    return byStatus.get(key);
  }

  private compileFor(operationId: string, status: string): ValidateFunction | undefined {
    const responses = this.responses.get(operationId) ?? {};
    // The exact status, else its class (`2XX`); `default` describes the failures here.
    const raw = responses[status] ?? responses[`${status.charAt(0)}XX`] ?? responses[`${status.charAt(0)}xx`];
    if (raw === undefined) return undefined;
    const content = deref(this.root, raw, this.fail)['content'];
    const media = isRecord(content) ? content['application/json'] : undefined;
    return isRecord(media) && media['schema'] !== undefined ? this.compile(media['schema']) : undefined;
  }
}

const areas = new Map<Area, AnswerSchemas>();

/** The answer schemas of `area`, read once per process. */
function answerSchemas(area: Area): AnswerSchemas {
  let found = areas.get(area);
  if (found === undefined) areas.set(area, (found = new AnswerSchemas(area)));
  return found;
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

/** Not an answer: the signal to read an area's document ahead of the first picked answer. */
const WARM_UP: UpstreamResponse = { status: 0, body: undefined };

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
  /** a check failed for a reason other than the answer (logged once) */
  private broken = false;

  constructor(options: SamplingOptions) {
    this.options = options;
    this.random = options.random ?? Math.random;
  }

  /** `client`, with a sample of its answers checked; `client` itself when sampling is off. */
  wrap(client: UpstreamClient): UpstreamClient {
    const { fraction } = this.options;
    if (fraction <= 0) return client;
    // The document is read (about 0.15 s) off the start and off any request's path: once the start
    // is done. Each operation's schema is compiled when its first answer is picked (a few ms).
    setTimeout(() => this.checkSafely(client.service, { operation: '', method: 'GET', path: '' }, WARM_UP), 0).unref();
    return {
      service: client.service,
      close: () => client.close(),
      request: (call) => {
        const answer = client.request(call);
        // The one cost of an answer that is not picked.
        if (this.random() >= fraction) return answer;
        return answer.then((response) => {
          // Timed (it runs synchronously: its time is CPU time), so that what sampling costs is measured.
          const started = process.hrtime.bigint();
          this.checkSafely(client.service, call, response);
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          this.options.metrics?.observeContractCheck(client.service, seconds);
          return response;
        });
      },
    };
  }

  /** Checks an answer; a check that cannot be made is logged once, and never changes the answer. */
  private checkSafely(service: Area, call: UpstreamRequest, response: UpstreamResponse): void {
    try {
      this.check(service, call, response);
    } catch (error) {
      if (this.broken) return;
      this.broken = true;
      this.options.log.error(
        { service, operation: call.operation },
        `contract sampling cannot check ${service} answers: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  private check(service: Area, call: UpstreamRequest, response: UpstreamResponse): void {
    if (response === WARM_UP) {
      answerSchemas(service);
      return;
    }
    // Unread bodies, answers without a body, and XML (whose values are all text until decoded) are not checked.
    if (call.ignoreBody === true || response.body === undefined || /xml/i.test(call.headers?.['accept'] ?? '')) return;
    const validate = answerSchemas(service).validator(call.operation, response.status);
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
