/**
 * When an operation's span is started: when its first upstream call asks for it (their parent)
 * or is finished without executing (a cached answer, a refusal), back-dated to the operation's
 * start, and never for an operation begun and then dropped, as the HTTP lane drops the record of
 * a request it hands to yoga (a document that does not parse or validate). Before, such an
 * operation's span was started at once and never ended, so it was never exported.
 */
import { ROOT_CONTEXT, type Context, type Span } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/observability/logger.js';
import { LogScope } from '../src/observability/request-context.js';
import { RequestObserver } from '../src/observability/request-observer.js';
import type { Tracing } from '../src/observability/tracing.js';
import { captureLog } from './helpers/stack.js';

type Started = { startTime: number; ended?: number; name?: string };

/** A tracing whose operation spans record when they were started and ended; the rest is not used here. */
function recordingTracing(): { tracing: Tracing; started: Started[] } {
  const started: Started[] = [];
  const unused = () => {
    throw new Error('not used by these tests');
  };
  const tracing = {
    extract: (): Context => ROOT_CONTEXT,
    startOperation(_parent: Context, startTime: number): Span {
      const record: Started = { startTime };
      started.push(record);
      return {
        updateName: (name: string) => void (record.name = name),
        setAttribute: () => undefined,
        setStatus: () => undefined,
        end: (endTime: number) => void (record.ended = endTime),
      } as unknown as Span;
    },
    startUpstreamCall: unused,
    endUpstreamCall: unused,
    headersFor: unused,
    shutdown: () => Promise.resolve(),
  } as unknown as Tracing;
  return { tracing, started };
}

function observer() {
  const recorded = recordingTracing();
  const logScope = new LogScope();
  const log = createLogger('info', captureLog(), logScope);
  return { observe: new RequestObserver(log, undefined, recorded.tracing, logScope), started: recorded.started };
}

const noHeaders = { get: () => null };

describe('operation spans', () => {
  it('starts none for an operation begun and then dropped (handed to yoga by the lane)', () => {
    const { observe, started } = observer();

    const request = observe.beginRequest('POST', '/graphql', noHeaders, () => ({}));
    observe.beginOperation(request);

    expect(started).toEqual([]);
  });

  it('starts the span when its first upstream call asks for it, dated from its start, and ends it once with its name', () => {
    const { observe, started } = observer();
    const request = observe.beginRequest('POST', '/graphql', noHeaders, () => ({}));
    const operation = observe.beginOperation(request);

    observe.documentRead(operation, {
      kind: 'OperationDefinition',
      operation: 'query',
      name: { kind: 'Name', value: 'Pet' },
    } as never);
    expect(started).toEqual([]);
    const span = observe.spanOf({ request, operation });
    expect(started).toEqual([{ startTime: operation.started }]);
    expect(observe.spanOf({ request, operation })).toBe(span);

    observe.resultReady(request, { data: {} });
    observe.responseReady(request, 200);
    expect(started).toEqual([{ startTime: operation.started, ended: operation.ended, name: 'query Pet' }]);
  });

  it('starts and ends one for an operation finished without executing (a cached answer)', () => {
    const { observe, started } = observer();
    const request = observe.beginRequest('POST', '/graphql', noHeaders, () => ({}));
    const operation = observe.beginOperation(request);

    observe.resultReady(request, { data: {} });
    observe.responseReady(request, 200);

    expect(started).toEqual([{ startTime: operation.started, ended: operation.ended }]);
  });

  it('starts none for a request refused before any operation (its error is counted, not traced)', () => {
    const { observe, started } = observer();
    const request = observe.beginRequest('POST', '/graphql', noHeaders, () => ({}));

    observe.refused(request, 'RATE_LIMITED');
    observe.responseReady(request, 429);

    expect(started).toEqual([]);
  });
});
