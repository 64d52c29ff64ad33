/**
 * GraphQL multipart requests (https://github.com/jaydenseric/graphql-multipart-request-spec),
 * streamed. yoga's built-in parser reads the whole form into memory first; this one hands the
 * operation to GraphQL as soon as the `operations` and `map` fields have arrived, and each
 * file is a stream the resolver pipes to the upstream while the client is still sending it.
 */
import { Readable } from 'node:stream';
import busboy from 'busboy';
import { GraphQLError } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { codedError, type ErrorCode } from '../errors.js';

/** Limits on multipart requests. */
export type UploadLimits = {
  /** largest file, in bytes; a larger one fails its upload while streaming. @default 10485760 */
  maxFileBytes: number;
  /** most files in one request. @default 5 */
  maxFiles: number;
};

/** What a `File` variable holds: a file of the current request, readable once, as it arrives. */
export class UploadedFile {
  #stream: Promise<Readable>;
  #arrive!: (stream: Readable) => void;
  #fail!: (error: Error) => void;
  #arrived: Readable | undefined;
  #claimed = false;
  #onWait: () => void;

  constructor(
    /** the multipart field that carries the file */
    readonly field: string,
    onWait: () => void,
  ) {
    this.#onWait = onWait;
    this.#stream = new Promise((resolve, reject) => {
      this.#arrive = resolve;
      this.#fail = reject;
    });
    // A file nobody reads must not turn its failure into an unhandled rejection.
    this.#stream.catch(() => undefined);
  }

  /** The file's content, streamed. Each file can be read once. */
  stream(): Promise<Readable> {
    if (this.#claimed) return Promise.reject(uploadError(`File "${this.field}" can only be read once`));
    this.#claimed = true;
    if (!this.#arrived) this.#onWait();
    return this.#stream;
  }

  /** @internal the part has arrived */
  attach(stream: Readable): void {
    this.#arrived = stream;
    this.#arrive(stream);
  }

  /** @internal the part will not arrive, or cannot be read */
  fail(error: Error): void {
    this.#fail(error);
  }

  /** @internal arrived, but no resolver has started reading it */
  get waiting(): boolean {
    return this.#arrived !== undefined && !this.#claimed;
  }

  /** @internal drop the content of a file nobody will read, so the request body keeps flowing */
  discard(reason: Error): void {
    this.#claimed = true;
    this.#fail(reason);
    this.#arrived?.resume();
  }
}

/** An upload refused: a bad part is the caller's input (400) unless said otherwise. */
function uploadError(message: string, code: ErrorCode = 'BAD_USER_INPUT', status = 400): GraphQLError {
  return codedError(code, message, { status });
}

/**
 * The yoga plugin. Files are read in the order they are sent: when a resolver waits for a
 * file while an earlier one has not been claimed, the earlier one is discarded (and fails if
 * read later) rather than letting the request stall.
 */
export function useStreamingUploads(limits: UploadLimits): Plugin {
  const filesOf = new WeakMap<object, UploadedFile[]>();
  return {
    onRequestParse({ request, setRequestParser }) {
      const contentType = request.headers.get('content-type') ?? '';
      if (request.method !== 'POST' || !/^multipart\/form-data\b/i.test(contentType)) return;
      setRequestParser((parsed) => {
        const files: UploadedFile[] = [];
        filesOf.set(request, files);
        return parseMultipart(parsed, contentType, limits, files);
      });
    },
    onResponse({ request }) {
      // Whatever the operation did not read is drained, so the connection stays usable.
      for (const file of filesOf.get(request) ?? []) file.discard(uploadError(`File "${file.field}" was not read`));
    },
  };
}

function parseMultipart(
  request: Request,
  contentType: string,
  limits: UploadLimits,
  files: UploadedFile[],
): Promise<GraphQLParams | GraphQLParams[]> {
  return new Promise((resolve, reject) =>
    new MultipartReader(limits, files, resolve, reject).read(request, contentType),
  );
}

const MALFORMED = 'Malformed multipart request: expected the JSON fields "operations" then "map"';

/**
 * One multipart request being read: its fields (`operations`, then `map`, which settles the
 * parameters) and its files, handed to the {@link UploadedFile}s the map names as they arrive.
 */
class MultipartReader {
  #operations: unknown;
  #settled = false;
  readonly #byField = new Map<string, UploadedFile>();

  constructor(
    private readonly limits: UploadLimits,
    private readonly files: UploadedFile[],
    private readonly resolve: (params: GraphQLParams | GraphQLParams[]) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  /** Pipes the request's body through busboy. */
  read(request: Request, contentType: string): void {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        // busboy signals 'limit' on reaching fileSize, even when the file ends exactly there: one
        // byte more tells a file of exactly maxFileBytes (accepted) from a larger one.
        limits: {
          fileSize: this.limits.maxFileBytes + 1,
          files: this.limits.maxFiles,
          fields: 2,
          fieldSize: 1024 * 1024,
        },
      });
    } catch {
      this.reject(uploadError('Malformed multipart request: missing boundary', 'BAD_REQUEST'));
      return;
    }
    parser.on('field', (name, value) => this.#field(name, value));
    parser.on('file', (name, stream) => this.#file(name, stream));
    // File parts beyond those the map names count too.
    parser.on('filesLimit', () => this.#failAll(this.#tooManyFiles()));
    parser.on('error', () => this.#failAll(uploadError('Malformed multipart request', 'BAD_REQUEST')));
    parser.on('close', () => {
      this.#settle(() => this.reject(uploadError(MALFORMED, 'BAD_REQUEST')));
      for (const file of this.#byField.values())
        file.fail(uploadError(`File "${file.field}" is missing from the request`));
    });

    if (!request.body) {
      this.#failAll(uploadError('Malformed multipart request: empty body', 'BAD_REQUEST'));
      return;
    }
    const body = Readable.from(chunksOf(request.body));
    body.on('error', (error) => {
      // The client went away or the body limit was hit: every file still flowing fails, so
      // the upstream request it feeds is aborted rather than completed with a truncated file.
      parser.destroy(error);
      this.#failAll(
        error instanceof GraphQLError ? error : uploadError('The request body could not be read', 'BAD_REQUEST'),
      );
    });
    body.pipe(parser);
  }

  #settle(outcome: () => void): void {
    if (this.#settled) return;
    this.#settled = true;
    outcome();
  }

  #failAll(error: Error): void {
    this.#settle(() => this.reject(error));
    for (const file of this.files) file.fail(error);
  }

  #tooManyFiles(): GraphQLError {
    return uploadError(`At most ${this.limits.maxFiles} files can be sent in one request`, 'PAYLOAD_TOO_LARGE', 413);
  }

  /** Files arrive one after another; a resolver that waits for a later file frees the earlier ones. */
  readonly #freeEarlierFiles = () => {
    for (const file of this.files)
      if (file.waiting) file.discard(uploadError(`File "${file.field}" was not read in the order it was sent`));
  };

  #field(name: string, value: string): void {
    if (this.#settled) return;
    try {
      if (name === 'operations') {
        this.#operations = JSON.parse(value);
        if (typeof this.#operations !== 'object' || this.#operations === null) throw new Error();
      } else if (name === 'map' && this.#operations !== undefined) {
        this.#map(value);
      } else {
        throw new Error();
      }
    } catch {
      this.#failAll(uploadError(MALFORMED, 'BAD_REQUEST'));
    }
  }

  /** The map names every file before any arrives: too many are refused here, none of them is sent upstream. */
  #map(value: string): void {
    const map: unknown = JSON.parse(value);
    if (typeof map !== 'object' || map === null || Array.isArray(map)) throw new Error();
    if (Object.keys(map).length > this.limits.maxFiles) {
      this.#failAll(this.#tooManyFiles());
      return;
    }
    for (const [field, paths] of Object.entries(map)) {
      if (!Array.isArray(paths) || !paths.every((item) => typeof item === 'string')) throw new Error();
      const file = new UploadedFile(field, this.#freeEarlierFiles);
      this.files.push(file);
      this.#byField.set(field, file);
      for (const path of paths) setPath(this.#operations, path, file);
    }
    const operations = this.#operations as GraphQLParams | GraphQLParams[];
    this.#settle(() => this.resolve(operations));
  }

  #file(name: string, stream: Readable): void {
    const file = this.#byField.get(name);
    this.#byField.delete(name);
    if (!file) {
      stream.resume();
      return;
    }
    stream.once('limit', () =>
      stream.destroy(
        uploadError(`File "${name}" is larger than ${this.limits.maxFileBytes} bytes`, 'PAYLOAD_TOO_LARGE', 413),
      ),
    );
    file.attach(stream);
  }
}

/** The chunks of a web stream (the fetch Request's body), for a Node stream to read. */
async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/** Puts `value` at a dotted path such as `variables.file` or `0.variables.files.1`. */
function setPath(target: unknown, path: string, value: unknown): void {
  const keys = path.split('.');
  let current = target;
  for (const [index, key] of keys.entries()) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') throw new Error('unsafe path');
    if (typeof current !== 'object' || current === null) throw new Error('path not found');
    const container = current as Record<string, unknown>;
    if (index === keys.length - 1) {
      if (!(key in container)) throw new Error('path not found');
      container[key] = value;
    } else {
      current = container[key];
    }
  }
}
