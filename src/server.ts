/**
 * Serving one gateway over HTTP, and stopping it gracefully: new connections are refused at
 * once, idle keep-alive connections closed, requests in flight finish (within
 * SHUTDOWN_GRACE_MS; the connection of each closes after its answer), then the gateway's
 * upstream pools close. Used by `main.ts` for the single process and by each cluster worker.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, type Config } from './config.js';
import type { Gateway } from './gateway.js';
import { writeInternalError } from './http/lane.js';
import { ShortLivedTable } from './short-lived-table.js';

/** A gateway being served. */
export type Serving = {
  /** the port it listens on (the one picked, with PORT=0) */
  port: number;
  /** requests whose answers are still being written */
  inFlight(): number;
  /**
   * Stops gracefully (see the module comment); resolves once everything has ended (`stopped`),
   * or at once when a second call or the end of the grace period cuts what is in flight (`cut`).
   */
  stop(why: string): Promise<'stopped' | 'cut'>;
};

/**
 * The last line of defence: `handler`, guarded so that a throw or a rejected promise from it is
 * still answered with the masked 500 (`INTERNAL_SERVER_ERROR`, no detail) when nothing of the
 * answer was sent yet, or its connection closed when it was; `report` logs the detail. Unguarded,
 * node:http would end the process on a throw, and leave the request unanswered on a rejection.
 */
export function guarded(
  handler: (request: IncomingMessage, response: ServerResponse) => unknown,
  report: (error: unknown, requestId: string) => void,
): RequestListener {
  return (request, response) => {
    const fail = (error: unknown) => {
      const requestId = randomUUID();
      try {
        report(error, requestId);
      } finally {
        writeInternalError(response, requestId);
      }
    };
    try {
      const returned = handler(request, response);
      if (returned instanceof Promise) returned.catch(fail);
    } catch (error) {
      fail(error);
    }
  };
}

/**
 * Listens with the gateway's request listener on HOST:PORT.
 * @throws ConfigError when the address cannot be listened on
 */
export async function serve(
  gateway: Gateway,
  config: Pick<Config, 'host' | 'port' | 'shutdownGraceMs'>,
  log: (line: string) => void = console.log,
): Promise<Serving> {
  const server = createServer(
    guarded(gateway.handler, (error, requestId) =>
      gateway.yoga.logger.error(error, `(request ${requestId}: answered 500 INTERNAL_SERVER_ERROR)`),
    ),
  );
  // The answers being written, so that a stop can see what is in flight and close each connection once
  // its answer is out. (A table made for entries that come and go with requests: see ShortLivedTable.)
  const answering = new ShortLivedTable<ServerResponse>();
  let answers = 0;
  let stopping: Promise<'stopped' | 'cut'> | undefined;
  let cut: ((why: string) => void) | undefined;
  server.prependListener('request', (_request, response: ServerResponse) => {
    const key = String((answers = (answers + 1) % Number.MAX_SAFE_INTEGER));
    answering.set(key, response);
    // While stopping, an answer closes its connection: nothing more will be served on it.
    if (stopping) response.setHeader('connection', 'close');
    response.once('close', () => {
      answering.delete(key);
      // An answer whose headers were out before the stop leaves its connection idle, not closed.
      if (stopping) setImmediate(() => server.closeIdleConnections());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new ConfigError(
          `cannot listen on HOST=${config.host} PORT=${config.port}: ` +
            `${error.code === 'EADDRINUSE' ? 'the port is in use' : (error.code ?? error.message)}`,
        ),
      ),
    );
    server.listen(config.port, config.host, resolve);
  });
  const { port } = server.address() as AddressInfo;

  const stop = (why: string): Promise<'stopped' | 'cut'> => {
    if (stopping) {
      cut?.(`${why} again`);
      return stopping;
    }
    log(
      `${why}: refusing new connections, finishing ${answering.size} in-flight request(s) within ` +
        `${config.shutdownGraceMs} ms`,
    );
    stopping = new Promise((resolve) => {
      /** Cuts what is still in flight: at the end of the grace period, or on a second stop. */
      cut = (reason: string) => {
        log(`${reason}: closing ${answering.size} unfinished request(s) and stopping`);
        server.closeAllConnections();
        // Cut means now: upstream calls still in flight are not waited for.
        resolve('cut');
      };
      const graceTimer = setTimeout(() => cut?.('grace period over'), config.shutdownGraceMs);
      for (const response of answering.values()) if (!response.headersSent) response.setHeader('connection', 'close');
      // close() stops listening at once and calls back when the last connection has ended;
      // keep-alive connections with no request in flight are closed now, not at their idle timeout.
      server.close(() => {
        clearTimeout(graceTimer);
        // No request is in flight any more, so the pools have no call to wait for.
        const stopped = () => resolve('stopped');
        void gateway.close().then(stopped, stopped);
      });
      server.closeIdleConnections();
    });
    return stopping;
  };

  return { port, inFlight: () => answering.size, stop };
}
