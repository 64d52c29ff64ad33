/**
 * How the HTTP front writes an answer it made itself: as yoga's path sends the same one, with the
 * request id, compressed as yoga's answers are (src/plugins/compression.ts), with the CORS
 * headers whatwg-node's own function gives for the same options; and the observer told.
 */
import type { ServerResponse } from 'node:http';
import { getCORSHeadersByRequestAndOptions, type CORSOptions } from '@whatwg-node/server';
import type { RequestObservations } from '../observability/index.js';
import { setRequestId, type RequestRecord } from '../observability/request-context.js';
import { encodeAnswer } from '../plugins/compression.js';
import { headerReaderRequest } from './request.js';
import type { ResultMediaType } from './result.js';

/** Writes the front's answers. */
export class AnswerWriter {
  readonly #cors: CORSOptions;
  readonly #compressionMinBytes: number;
  readonly #observe: RequestObservations;

  constructor(options: { cors: CORSOptions; compressionMinBytes: number; observe: RequestObservations }) {
    this.#cors = options.cors;
    this.#compressionMinBytes = options.compressionMinBytes;
    this.#observe = options.observe;
  }

  /** Writes an answer, with the request id, compressed if it is large and the client asks; and logs it. */
  send(
    response: ServerResponse,
    record: RequestRecord,
    status: number,
    mediaType: ResultMediaType,
    body: string,
    extra?: Record<string, string>,
  ): void {
    const answer = encodeAnswer(body, response.req.headers['accept-encoding'], this.#compressionMinBytes);
    const headers: Record<string, string> = {
      'content-type': `${mediaType}; charset=utf-8`,
      'content-length': String(answer.length),
      ...answer.headers,
      ...extra,
    };
    setRequestId(headers, record.id);
    const cors =
      this.#cors === false ? null : getCORSHeadersByRequestAndOptions(headerReaderRequest(response.req), this.#cors);
    // Set as whatwg-node's CORS plugin sets them on yoga's answers: each replaces a header of its name.
    if (cors !== null) for (const [name, value] of Object.entries(cors)) headers[name.toLowerCase()] = value;
    response.writeHead(status, headers);
    response.end(answer.body);
    this.#observe.responseReady(record, status);
  }
}
