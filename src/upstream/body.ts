/**
 * Reading an upstream answer's body, bounded: in size (a declared length over the cap is refused
 * before a byte is read; a body that grows past it is cut at the first chunk beyond) and in time
 * (the whole body within its timeout, however steadily it trickles).
 */

/** The body is larger than the cap. */
export class ResponseTooLarge extends Error {}

/** The body read was cut short by the whole-body timeout. */
export class BodyTimeout extends Error {}

/** An answer's body as undici gives it. */
type Body = AsyncIterable<Buffer> & {
  destroy(error?: Error): unknown;
  on(event: 'error', listener: () => void): unknown;
};

/** The limits of one read. */
export type BodyLimits = {
  /** the most bytes read */
  maxBytes: number;
  /** the length the answer declared (Content-Length), if any */
  declaredLength: number;
  /** the whole body must arrive within this many milliseconds; undefined: another deadline ends the read first */
  timeoutMs: number | undefined;
};

/**
 * Reads a body as UTF-8 text within `limits`; throws {@link ResponseTooLarge} or
 * {@link BodyTimeout}, or the stream's own error. Destroying the stream aborts the answer and
 * closes its connection (a half-read answer cannot be reused).
 */
export async function readBoundedBody(body: Body, limits: BodyLimits): Promise<string> {
  // The body is destroyed when it is too large or too slow, perhaps while nothing reads it; its
  // error then has a listener (and never becomes an uncaught exception); readers still get it.
  body.on('error', () => undefined);
  if (limits.declaredLength > limits.maxBytes) {
    body.destroy();
    throw new ResponseTooLarge();
  }
  const timer =
    limits.timeoutMs === undefined ? undefined : setTimeout(() => body.destroy(new BodyTimeout()), limits.timeoutMs);
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > limits.maxBytes) {
        body.destroy();
        throw new ResponseTooLarge();
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, size).toString('utf8');
  } finally {
    clearTimeout(timer);
  }
}
