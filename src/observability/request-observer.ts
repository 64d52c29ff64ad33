/**
 * What observability records of each request, in the order yoga's hooks make the observations:
 * the request's record, its operations (counted and their spans ended once), its log line. The
 * observability plugin makes them from yoga's hooks, the gateway's HTTP front (src/http/) as it
 * serves a request: the same calls, each one step of the observation.
 */
import type { Span } from '@opentelemetry/api';
import type { ExecutionResult, GraphQLError, OperationDefinitionNode } from 'graphql';
import type { HeaderSource } from '../credentials.js';
import { credentialSecrets } from '../secrets.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import { HEALTH_PATH, METRICS_PATH, READINESS_PATH } from './paths.js';
import { replacedBy } from '../errors.js';
import {
  requestIdFrom,
  RequestScopes,
  type LogScope,
  type OperationRecord,
  type RequestRecord,
  type RequestScope,
} from './request-context.js';
import { logFailure } from './yoga-logger.js';
import { requestLogLine } from './request-log.js';
import { endOperationSpan, nameOperationSpan, type Tracing } from './tracing.js';

/** GraphQL names only: anything else a client puts in `operationName` stays out of metrics and logs. */
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,127}$/;

/** `extensions.code` of each error of a result (or of each result of a batch); a stream has none to count here. */
function errorCodes(result: unknown): string[] {
  if (Array.isArray(result)) return result.flatMap(errorCodes);
  if (typeof result !== 'object' || result === null || Symbol.asyncIterator in result) return [];
  const { errors } = result as ExecutionResult;
  return (errors ?? []).map((error) => {
    const code = error.extensions?.['code'];
    return typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR';
  });
}

/** The errors of a result, or of each result of a batch; a stream has none to look at here. */
function errorsOf(result: unknown): readonly GraphQLError[] {
  if (Array.isArray(result)) return result.flatMap(errorsOf);
  if (typeof result !== 'object' || result === null || Symbol.asyncIterator in result) return [];
  return (result as ExecutionResult).errors ?? [];
}

/**
 * The observations of a request, in the order yoga's hooks make them: made by the observability
 * plugin, and by the gateway's own HTTP lane for the requests it serves (`Observability.lane`).
 */
export type RequestObservations = {
  /** the record of each request, and the scope of each operation (by its GraphQL context), being served */
  readonly scopes: RequestScopes;
  beginRequest(
    method: string,
    path: string,
    headers: HeaderSource,
    allHeaders: () => Record<string, string | string[] | undefined>,
    request?: object,
  ): RequestRecord;
  beginOperation(request: RequestRecord, context?: object): OperationRecord;
  paramsRead(
    request: RequestRecord,
    operation: OperationRecord,
    params: { operationName?: unknown; variables?: unknown },
    secrets: readonly string[],
  ): void;
  documentRead(operation: OperationRecord, definition: OperationDefinitionNode | null | undefined): void;
  /** the span of a scope's operation, started when first asked for (its first upstream call) or when it finishes */
  spanOf(scope: RequestScope | undefined): Span | undefined;
  resultReady(request: RequestRecord, result: unknown): void;
  refused(request: RequestRecord, code: string): void;
  responseReady(request: RequestRecord, status: number): void;
  /** writes log lines (synchronously, in `write`) as lines of `request`: with its id, its secrets redacted */
  logging(request: RequestRecord | undefined, write: () => void): void;
};

/** True when an operation of the request ended with an error. */
function hadErrors(request: RequestRecord): boolean {
  for (const operation of request.operations) if (operation.errorCodes.length > 0) return true;
  return false;
}

/** The observations of every request of one gateway: its log, metrics and tracing. */
export class RequestObserver implements RequestObservations {
  /** whether debug lines are written: only then are headers and variables kept */
  private readonly debug: boolean;
  /**
   * the share of answered requests whose `info` line is written (REQUEST_LOG_SAMPLE); a request
   * with an error, or a status of 400 or more, always has its line, and so does every request when
   * debug lines are written
   */
  private readonly sample: number;
  /** the record of each request, and the scope of each operation, being served */
  readonly scopes = new RequestScopes();

  constructor(
    private readonly log: Logger,
    private readonly metrics: Metrics | undefined,
    private readonly tracing: Tracing | undefined,
    private readonly logScope: LogScope,
    requestLogSample = 1,
  ) {
    this.debug = log.isLevelEnabled('debug');
    this.sample = this.debug ? 1 : requestLogSample;
  }

  /**
   * A request starts: its record, current for everything that runs while it is served, and found
   * by `request` (yoga's Fetch Request, or the HTTP front's stand-in for it) when one is given.
   */
  beginRequest(
    method: string,
    path: string,
    headers: HeaderSource,
    allHeaders: () => Record<string, string | string[] | undefined>,
    request?: object,
  ): RequestRecord {
    const record: RequestRecord = {
      id: requestIdFrom(headers),
      started: performance.now(),
      method,
      path,
      operations: [],
      upstream: [],
      secrets: credentialSecrets(headers),
      ...(this.tracing ? { traceParent: this.tracing.extract(headers) } : {}),
      // Headers are only kept for a debug log, where the logger redacts the credentials among them.
      ...(this.debug ? { headers: allHeaders() } : {}),
    };
    if (request !== undefined) this.scopes.bindRequest(request, record);
    return record;
  }

  /**
   * An operation of `request` starts. Its span, when tracing is on, is started once its first
   * upstream call asks for it (or it is finished without one), back-dated to now: an operation the
   * HTTP lane begins and then hands to yoga (a document that does not parse or validate) leaves
   * no span open. The operation is found by `context`, its GraphQL context, when one is given.
   */
  beginOperation(request: RequestRecord, context?: object): OperationRecord {
    const operation: OperationRecord = { started: performance.now(), errorCodes: [] };
    if (this.tracing) operation.traced = true;
    request.operations.push(operation);
    if (context !== undefined) this.scopes.bindOperation(context, { request, operation });
    return operation;
  }

  /** The operation's parameters are known: its name, and the secrets its variables carry. */
  paramsRead(
    request: RequestRecord,
    operation: OperationRecord,
    params: { operationName?: unknown; variables?: unknown },
    secrets: readonly string[],
  ): void {
    if (typeof params.operationName === 'string' && GRAPHQL_NAME.test(params.operationName))
      operation.name = params.operationName;
    if (secrets.length > 0) request.secrets.push(...secrets);
    // Variables are only kept for a debug log, and redacted there.
    if (this.debug) operation.variables = params.variables;
  }

  /** The operation's document is parsed: its type and its name as the document says. */
  documentRead(operation: OperationRecord, definition: OperationDefinitionNode | null | undefined): void {
    if (!definition) return;
    operation.type = definition.operation;
    operation.name = definition.name?.value;
  }

  /**
   * The span of a scope's operation (the parent of its upstream calls), started at the operation's
   * start the first time it is asked for; none without tracing.
   */
  spanOf(scope: RequestScope | undefined): Span | undefined {
    return scope?.operation && this.operationSpan(scope.request, scope.operation);
  }

  private operationSpan(request: RequestRecord, operation: OperationRecord): Span | undefined {
    if (operation.span === undefined && operation.traced && this.tracing && request.traceParent)
      operation.span = this.tracing.startOperation(request.traceParent, operation.started);
    return operation.span;
  }

  /**
   * The result is ready to be sent: its errors are counted (the plugins before this one have given each
   * its final code).
   */
  resultReady(request: RequestRecord, result: unknown): void {
    // Each error the masking replaced is logged here, once, with the request it answers.
    for (const error of errorsOf(result)) {
      const original = replacedBy(error);
      if (original !== undefined) this.logScope.during(request, () => logFailure(this.log, original));
    }
    const results = Array.isArray(result) ? result : [result];
    // A request refused before any operation ran (unreadable body, no query) still counts its error.
    if (request.operations.length === 0 && errorCodes(result).length > 0) {
      request.operations.push({ started: request.started, ended: performance.now(), errorCodes: [] });
    }
    request.operations.forEach((operation, index) => {
      operation.errorCodes = errorCodes(request.operations.length === results.length ? results[index] : result);
      this.finishOperation(request, operation);
    });
  }

  /** A request refused before it was read (a rate limit): counted and logged without building an error. */
  refused(request: RequestRecord, code: string): void {
    request.operations.push({ started: request.started, ended: performance.now(), errorCodes: [code] });
  }

  /** The response is ready: the request's log line. The caller sends the request id with it (`setRequestId`). */
  responseReady(request: RequestRecord, status: number): void {
    // An operation whose result was never processed (its request failed on the way) is finished here.
    for (const operation of request.operations) this.finishOperation(request, operation);
    // Probes come every few seconds; they are only worth a line when debugging.
    const probe =
      request.method === 'GET' &&
      (request.path === HEALTH_PATH || request.path === READINESS_PATH || request.path === METRICS_PATH);
    // The line is only made when its level is logged (LOG_LEVEL=warn logs no request line).
    if (!this.log.isLevelEnabled(probe ? 'debug' : 'info')) return;
    // A request that went well is one line in REQUEST_LOG_SAMPLE: making and writing each cost a
    // fifth of a cheap request's CPU, and metrics count and time every request
    // (docs/decisions/0011-request-log-sample.md). One that did not is always written.
    if (this.sample < 1 && !probe && status < 400 && !hadErrors(request) && Math.random() >= this.sample) return;
    const line = requestLogLine(request, status);
    this.logScope.during(request, () =>
      probe ? this.log.debug(line.fields, line.message) : this.log.info(line.fields, line.message),
    );
  }

  /** writes log lines (synchronously, in `write`) as lines of `request`: with its id, its secrets redacted */
  logging(request: RequestRecord | undefined, write: () => void): void {
    this.logScope.during(request, write);
  }

  /** Counts an operation and ends its span, once. */
  private finishOperation(request: RequestRecord, operation: OperationRecord): void {
    if (operation.finished) return;
    operation.finished = true;
    operation.ended ??= performance.now();
    this.metrics?.observeOperation(operation);
    const span = this.operationSpan(request, operation);
    if (span) {
      nameOperationSpan(span, operation);
      endOperationSpan(span, operation.errorCodes, operation.ended);
    }
  }
}
