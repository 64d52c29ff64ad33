/**
 * Cross-site requests: CSRF prevention (a request a page of another site could make without
 * asking must carry a header only a script can add) and CORS (which other origins, if any, may
 * read the answers).
 */
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import type { CORSOptions } from '@whatwg-node/server';
import type { Plugin } from 'graphql-yoga';
import { CREDENTIAL_HEADERS } from '../credentials.js';
import { codedError } from '../errors.js';

/**
 * Headers that mark a request as sent by a script rather than by a plain HTML form or link (which
 * a browser sends cross-site without asking): ours, and the ones common clients already send.
 */
export const CSRF_HEADERS = [
  'x-graphql-csrf',
  'x-graphql-yoga-csrf',
  'graphql-preflight',
  'apollo-require-preflight',
  'x-apollo-operation-name',
];

/**
 * Request headers a cross-origin page may send (when CORS_ORIGINS lets it call at all); an MCP
 * client sends `mcp-protocol-version` with every message after `initialize` (src/mcp/).
 */
const CORS_ALLOWED_HEADERS = [
  'accept',
  'content-type',
  ...Object.values(CREDENTIAL_HEADERS),
  ...CSRF_HEADERS,
  'mcp-protocol-version',
];

/**
 * No CORS headers at all unless origins are configured: only pages of the gateway's own origin can read its answers.
 */
export function corsOptions(origins: readonly string[] | undefined): CORSOptions {
  if (origins === undefined) return false;
  const any = origins.includes('*');
  return {
    origin: [...origins],
    credentials: !any,
    methods: ['GET', 'POST'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    maxAge: 600,
  };
}

/**
 * yoga's CSRF prevention, with a stable code: a GET, or a POST with a content type an HTML form
 * can send (`text/plain`, `application/x-www-form-urlencoded`, `multipart/form-data`), must carry
 * one of {@link CSRF_HEADERS}. A JSON POST needs none: browsers ask the server first (preflight).
 */
export function useCsrfPrevention(): Plugin {
  const library = useCSRFPrevention({ requestHeaders: CSRF_HEADERS });
  return {
    onRequestParse(payload) {
      // Other methods are refused by yoga anyway (405); an OPTIONS preflight is CORS's business.
      if (payload.request.method !== 'GET' && payload.request.method !== 'POST') return undefined;
      try {
        return library.onRequestParse?.(payload);
      } catch {
        throw codedError(
          'CSRF_HEADER_REQUIRED',
          'This request could have been sent by another site: send it as application/json, or add the header ' +
            'x-graphql-csrf: 1 (GET requests and uploads need the header)',
          { status: 403 },
        );
      }
    },
  };
}
