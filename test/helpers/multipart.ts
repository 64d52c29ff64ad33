/**
 * GraphQL multipart requests (https://github.com/jaydenseric/graphql-multipart-request-spec),
 * built by hand so that a test controls every byte: the `operations` field, the `map` field
 * and the file part, or any malformed variation of them. They are sent with `node:http`, so a
 * test can write the body in chunks and pause between them to watch the upstream mid-upload.
 */
import { request as httpRequest, type Agent, type ClientRequest } from 'node:http';
import type { GraphQLResponse } from './stack.js';

/** The boundary of every body built here; it appears in no test file's content. */
const BOUNDARY = 'gateway-test-boundary-7f3a9c1e5b';

/** The Content-Type of a multipart body built with {@link BOUNDARY}. */
const MULTIPART_CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

/** One part of a multipart body: a text field, or a file (its content may be sent separately). */
export type Part =
  { name: string; value: string } | { name: string; filename: string; contentType: string; content?: Buffer };

/** The bytes of one part up to its content: the delimiter line and the part's headers. */
function partHead(part: Part): Buffer {
  const disposition =
    'filename' in part
      ? `form-data; name="${part.name}"; filename="${part.filename}"`
      : `form-data; name="${part.name}"`;
  const headers = [
    `Content-Disposition: ${disposition}`,
    ...('filename' in part ? [`Content-Type: ${part.contentType}`] : []),
  ];
  return Buffer.from(`--${BOUNDARY}\r\n${headers.join('\r\n')}\r\n\r\n`);
}

/** The bytes that end a body: the line break after the last part's content and the closing delimiter. */
export const CLOSING = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

function partBytes(part: Part, index: number): Buffer[] {
  const content = 'filename' in part ? (part.content ?? Buffer.alloc(0)) : Buffer.from(part.value);
  // Each part after the first starts on a new line: the CRLF belongs to the delimiter, not the content.
  return [...(index > 0 ? [Buffer.from('\r\n')] : []), partHead(part), content];
}

/** A whole multipart body from its parts, in the order given. */
export function multipartBody(parts: readonly Part[]): Buffer {
  return Buffer.concat([...parts.flatMap(partBytes), CLOSING]);
}

/**
 * The start of a body whose last part is a file whose content is still to come: every part
 * whole, then the last part's headers. Follow it with the content and {@link CLOSING}.
 */
export function multipartOpening(parts: readonly Part[]): Buffer {
  const last = parts.length - 1;
  const lastPart = parts[last];
  if (lastPart === undefined) throw new Error('multipartOpening needs at least one part');
  return Buffer.concat([
    ...parts.slice(0, last).flatMap(partBytes),
    ...(last > 0 ? [Buffer.from('\r\n')] : []),
    partHead(lastPart),
  ]);
}

/**
 * The spec's three parts for one file in `variables.file`: `operations`, `map`
 * (`{"0":["variables.file"]}`) and the file part `0`.
 */
export function uploadParts(
  operation: { query: string; variables: Record<string, unknown> },
  file: { filename: string; contentType: string; content?: Buffer },
): Part[] {
  return [
    {
      name: 'operations',
      value: JSON.stringify({ query: operation.query, variables: { ...operation.variables, file: null } }),
    },
    { name: 'map', value: JSON.stringify({ '0': ['variables.file'] }) },
    { name: '0', ...file },
  ];
}

/** A multipart request being written: send chunks, pausing between them as the test likes, then end it. */
export type OpenRequest = {
  /** writes one chunk; resolves once it has been handed to the socket */
  write(chunk: Buffer): Promise<void>;
  /** writes the last chunk (if any) and ends the body */
  end(chunk?: Buffer): Promise<void>;
  /** the gateway's answer, whenever it comes (possibly before the body is finished) */
  response: Promise<GraphQLResponse>;
};

/** How a multipart request is sent. */
export type SendOptions = {
  /** extra request headers (credentials) */
  headers?: Record<string, string>;
  /** sent as Content-Length; without it the body is sent chunked, as it is written */
  contentLength?: number;
  /**
   * the agent whose connections to use; a keep-alive agent with one socket sends successive
   * requests on one connection. @default a fresh connection per request, so that one test's
   * half-read body can never reach the next request
   */
  agent?: Agent;
};

/** Opens a POST to the gateway with the multipart Content-Type; the body is written by the caller. */
export function openMultipart(url: string, options: SendOptions = {}): OpenRequest {
  let request!: ClientRequest;
  const response = new Promise<GraphQLResponse>((resolve, reject) => {
    request = httpRequest(url, {
      method: 'POST',
      agent: options.agent ?? false,
      headers: {
        'content-type': MULTIPART_CONTENT_TYPE,
        accept: 'application/graphql-response+json, application/json',
        // A multipart body is what an HTML form can send cross-site: CSRF prevention wants this header.
        'x-graphql-csrf': '1',
        ...(options.contentLength !== undefined ? { 'content-length': String(options.contentLength) } : {}),
        ...options.headers,
      },
    });
    request.once('response', (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.once('error', reject);
      incoming.once('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          const body = JSON.parse(text) as Omit<GraphQLResponse, 'status'>;
          resolve({ status: incoming.statusCode ?? 0, ...body });
        } catch {
          reject(
            new Error(
              `the gateway answered ${incoming.statusCode} with a body that is not JSON: ${text.slice(0, 200)}`,
            ),
          );
        }
      });
    });
    // The gateway may answer (and close) before the whole body is written, for example when a
    // file is over the limit; a write error after that is expected and must not fail the test.
    request.on('error', reject);
  });
  response.catch(() => undefined);

  const write = (chunk: Buffer) =>
    new Promise<void>((resolve) => {
      if (request.destroyed) return resolve();
      request.write(chunk, () => resolve());
    });
  return {
    write,
    async end(chunk) {
      if (chunk) await write(chunk);
      await new Promise<void>((resolve) => (request.destroyed ? resolve() : request.end(() => resolve())));
    },
    response,
  };
}

/** Sends a whole multipart body at once (with its Content-Length) and returns the gateway's answer. */
export async function postMultipart(
  url: string,
  body: Buffer,
  options: Omit<SendOptions, 'contentLength'> = {},
): Promise<GraphQLResponse> {
  const open = openMultipart(url, { ...options, contentLength: body.length });
  // Not awaited: the gateway may answer before it has read the whole body.
  void open.end(body);
  return open.response;
}
