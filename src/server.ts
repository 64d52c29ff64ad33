/**
 * Serving one gateway over HTTP, and stopping it gracefully: new connections are refused at
 * once; requests in flight finish (within SHUTDOWN_GRACE_MS; the connection of each closes after
 * its answer); a keep-alive connection with nothing in flight may still bring one more request
 * for {@link IDLE_CLOSE_DELAY_MS} (answered with `Connection: close`) before it is closed; then
 * the gateway's upstream pools close. Live queries (LIVE_QUERIES) have their WebSocket served on
 * this server's upgrades, and end as a stop begins. Used by `main.ts` for the single process and by each
 * cluster worker, which bound the whole stop with a deadline of their own.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import { ConfigError, type Config } from './config/index.js';
import type { Gateway } from './gateway.js';
import { writeInternalError } from './internal-error.js';
import { ShortLivedTable } from './short-lived-table.js';

/**
 * How long, once a stop has begun, a keep-alive connection with no request in flight is kept
 * open (at most half of SHUTDOWN_GRACE_MS, so that a stop with nothing in flight ends well within
 * it). A proxy in front (nginx) may have just written a request on it that the gateway has not
 * read yet: closed at once, that request would be lost, and a proxy retries a GET but not a POST
 * (a 502 to its client). Kept open, the request is answered with `Connection: close`.
 */
const IDLE_CLOSE_DELAY_MS = 1000;

/** A gateway being served. */
export type Serving = {
  /** the port it listens on (the one picked, with PORT=0) */
  port: number;
  /** requests whose answers are still being written */
  inFlight(): number;
  /**
   * Stops gracefully (see the module comment); resolves once everything has ended (`stopped`),
   * or at once when a second call or the end of the grace period cuts what is in flight (`cut`);
   * rejects when the stop itself fails.
   */
  stop(why: string): Promise<'stopped' | 'cut'>;
};

/**
 * The last line of defence: `handler`, guarded so that a throw or a rejected promise from it is
 * still answered with the masked 500 (`INTERNAL_SERVER_ERROR`, no detail) when nothing of the
 * answer was sent yet, or its connection closed when it was; `report` logs the detail. Unguarded,
 * node:http would end the process on a throw, and leave the request unanswered on a rejection.
 */
function guarded(
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
 * A server's connections and the answers being written on them: what a stop waits for, and which
 * connections it may close. (Tables made for entries that come and go with requests: see
 * ShortLivedTable.)
 */
class Connections {
  /** the answers being written: an answer counts until the last of it has reached the kernel */
  readonly answering = new ShortLivedTable<ServerResponse>();
  private readonly open = new ShortLivedTable<Socket>();
  private counted = 0;
  private stopping = false;
  private closingIdle = false;

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      const key = this.next();
      this.open.set(key, socket);
      socket.once('close', () => this.open.delete(key));
    });
    server.prependListener('request', (_request, response: ServerResponse) => {
      const key = this.next();
      this.answering.set(key, response);
      // While stopping, an answer closes its connection: nothing more will be served on it.
      if (this.stopping) response.setHeader('connection', 'close');
      response.once('close', () => {
        this.answering.delete(key);
        // An answer whose headers were out before the stop leaves its connection open, and idle.
        if (this.closingIdle) setImmediate(() => this.closeIdle());
      });
    });
  }

  /** A stop begins: every answer not yet begun closes its connection. */
  stop(): void {
    this.stopping = true;
    for (const response of this.answering.values())
      if (!response.headersSent) response.setHeader('connection', 'close');
  }

  /**
   * Closes every connection with no answer being written, now and as each becomes idle. Not
   * node:http's closeIdleConnections(), which also closes a connection whose answer has been
   * ended but is still being sent (a large one to a slow client), cutting it short.
   */
  closeIdle(): void {
    this.closingIdle = true;
    const busy = new Set(this.answering.values().map((response) => response.socket));
    for (const socket of this.open.values()) if (!busy.has(socket)) socket.destroy();
  }

  private next(): string {
    return String((this.counted = (this.counted + 1) % Number.MAX_SAFE_INTEGER));
  }
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
  const connections = new Connections(server);
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
  const { answering } = connections;
  // Live queries' WebSocket transport (LIVE_QUERIES), on this server's upgrades.
  gateway.live?.attach(server);

  let stopping: Promise<'stopped' | 'cut'> | undefined;
  let cut: ((why: string) => void) | undefined;
  const stop = (why: string): Promise<'stopped' | 'cut'> => {
    if (stopping) {
      cut?.(`${why} again`);
      return stopping;
    }
    log(
      `${why}: refusing new connections, finishing ${answering.size} in-flight request(s) within ` +
        `${config.shutdownGraceMs} ms`,
    );
    stopping = new Promise((resolve, reject) => {
      const graceTimer = setTimeout(() => cut?.('grace period over'), config.shutdownGraceMs);
      const idleTimer = setTimeout(
        () => connections.closeIdle(),
        Math.min(IDLE_CLOSE_DELAY_MS, config.shutdownGraceMs / 2),
      );
      /** Cuts what is still in flight: at the end of the grace period, or on a second stop. */
      cut = (reason: string) => {
        log(`${reason}: closing ${answering.size} unfinished request(s) and stopping`);
        clearTimeout(graceTimer);
        clearTimeout(idleTimer);
        server.closeAllConnections();
        // Cut means now: upstream calls still in flight are not waited for.
        resolve('cut');
      };
      try {
        connections.stop();
        // Live queries end now (their event streams complete, their WebSockets close with 1001):
        // a stream has no end of its own to wait for within the grace period.
        gateway.live?.queries.stop().catch((error: unknown) => gateway.yoga.logger.error(error));
        // net.Server's close: stops listening at once, and calls back when the last connection has
        // ended (node:http's own would also close the idle ones at once: see IDLE_CLOSE_DELAY_MS).
        NetServer.prototype.close.call(server, () => {
          clearTimeout(graceTimer);
          clearTimeout(idleTimer);
          // No request is in flight any more, so the pools have no call to wait for.
          const stopped = () => resolve('stopped');
          Promise.resolve()
            .then(() => gateway.close())
            .then(stopped, stopped);
        });
      } catch (error) {
        clearTimeout(graceTimer);
        clearTimeout(idleTimer);
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
    return stopping;
  };

  return { port, inFlight: () => answering.size, stop };
}
