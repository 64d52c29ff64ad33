/**
 * The caller's credentials, read by an allow-list: the `Authorization: Bearer` token and the
 * `api_key` header, nothing else. Incoming headers are never copied upstream; each upstream
 * operation receives only the credential its security declares (least privilege). Their values
 * as secrets (redaction, fingerprints) are `secrets.ts`'s business.
 */

/** What the caller sent. Values are secrets: never log them, never put them in an error. */
export type Credentials = {
  readonly bearer?: string;
  readonly apiKey?: string;
};

/** The security an upstream operation declares. */
export type Security =
  /** `Authorization: Bearer` (the pet store's OAuth 2.0 scheme, the plant area's HTTP bearer) */
  | 'bearer'
  /** the `api_key` header */
  | 'apiKey'
  /** either; `GET /pet/{petId}` lists both, and the api_key is sent when the caller has one */
  | 'apiKeyOrBearer'
  /** no credential is sent */
  | 'none';

/** The headers a caller's credentials come in, the only ones forwarded upstream (each to the operations that declare it). */
export const CREDENTIAL_HEADERS = { bearer: 'authorization', apiKey: 'api_key' } as const;

/**
 * Request headers whose values are secrets wherever they would be shown (a log line's headers):
 * the credential headers, and those that carry credentials to other software (cookies, a proxy's,
 * another API key spelling), which the gateway never forwards.
 */
export const SECRET_HEADERS: readonly string[] = [
  ...Object.values(CREDENTIAL_HEADERS),
  'x-api-key',
  'cookie',
  'proxy-authorization',
];

/** Headers read by name: a Fetch `Headers`, or node:http's headers behind a getter. */
export type HeaderSource = { get(name: string): string | null };

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Reads the credentials from the incoming request's headers; anything malformed is treated as absent. */
export function readCredentials(headers: HeaderSource): Credentials {
  const authorization = headers.get(CREDENTIAL_HEADERS.bearer);
  const bearer = authorization === null ? undefined : BEARER.exec(authorization)?.[1];
  const apiKey = headers.get(CREDENTIAL_HEADERS.apiKey)?.trim();
  // Read twice for every request (its log's secrets, its context): one object, no spreads.
  const credentials: { bearer?: string; apiKey?: string } = {};
  if (bearer) credentials.bearer = bearer;
  if (apiKey) credentials.apiKey = apiKey;
  return credentials;
}

/** The headers that carry `credentials` to an operation with the given security; empty when it declares none. */
export function credentialHeaders(credentials: Credentials, security: Security): Record<string, string> {
  const bearer = credentials.bearer ? { [CREDENTIAL_HEADERS.bearer]: `Bearer ${credentials.bearer}` } : undefined;
  const apiKey = credentials.apiKey ? { [CREDENTIAL_HEADERS.apiKey]: credentials.apiKey } : undefined;
  switch (security) {
    case 'bearer':
      return bearer ?? {};
    case 'apiKey':
      return apiKey ?? {};
    case 'apiKeyOrBearer':
      return apiKey ?? bearer ?? {};
    case 'none':
      return {};
  }
}
