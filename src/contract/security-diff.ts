/**
 * Compares what an operation's `security` asks for with the credential the gateway sends it
 * (`credentialHeaders` in `src/credentials.ts`): a bearer token, the `api_key` header, either
 * (whichever the caller has) or none. Schemes are compared by what goes on the wire, not by name:
 * an OAuth 2.0 or OpenID Connect scheme is a bearer token too.
 */
import type { ChangeList } from './changes.js';
import type { OperationUse } from './graphql-impact.js';
import { deref, isRecord, type OpenApiObject } from './openapi.js';
import type { Side } from './schema-diff.js';

/** A credential as it travels: `bearer`, `header api_key`, or what else a scheme is (`cookie session`). */
type Credential = string;

/** What the gateway sends, by the operation's security in `src/upstream/`. */
const SENT: Record<OperationUse['security'], readonly Credential[]> = {
  bearer: ['bearer'],
  apiKey: ['header api_key'],
  apiKeyOrBearer: ['header api_key', 'bearer'],
  none: [],
};

function credentialOf(document: Side, name: string): Credential {
  const components = isRecord(document.root['components']) ? document.root['components'] : {};
  const schemes = isRecord(components['securitySchemes']) ? components['securitySchemes'] : {};
  if (!isRecord(schemes[name])) throw document.fail(`security scheme ${name} is not declared`);
  const scheme = deref(document.root, schemes[name], document.fail);
  const type = String(scheme['type']);
  if (type === 'oauth2' || type === 'openIdConnect') return 'bearer';
  if (type === 'http')
    return String(scheme['scheme']).toLowerCase() === 'bearer' ? 'bearer' : `http ${String(scheme['scheme'])}`;
  if (type === 'apiKey')
    return `${String(scheme['in'])} ${String(scheme['in']) === 'header' ? String(scheme['name']).toLowerCase() : String(scheme['name'])}`;
  return type;
}

/** The alternatives an operation accepts, each the credentials it needs together; [] means none is needed. */
function alternativesOf(document: Side, operation: OpenApiObject): Credential[][] {
  const raw = operation['security'] ?? document.root['security'] ?? [];
  const requirements: unknown[] = Array.isArray(raw) ? raw : [];
  return requirements.map((requirement) =>
    Object.keys(isRecord(requirement) ? requirement : {}).map((name) => credentialOf(document, name)),
  );
}

function met(alternatives: Credential[][], sent: readonly Credential[]): boolean {
  return (
    alternatives.length === 0 || alternatives.some((needed) => needed.every((credential) => sent.includes(credential)))
  );
}

function words(alternatives: Credential[][]): string {
  if (alternatives.length === 0 || alternatives.some((needed) => needed.length === 0)) return 'no credential';
  return alternatives.map((needed) => needed.join(' and ')).join(' or ');
}

/** What comparing one operation's security needs. */
type SecurityComparison = { base: Side; upstream: Side; use: OperationUse; list: ChangeList };

/** Compares the security of one operation the gateway uses. */
export function compareSecurity(context: SecurityComparison, base: OpenApiObject, upstream: OpenApiObject): void {
  const { use, list } = context;
  const before = alternativesOf(context.base, base);
  const after = alternativesOf(context.upstream, upstream);
  if (words(before) === words(after)) return;
  const sent = SENT[use.security];
  const change = `security changed from ${words(before)} to ${words(after)}`;
  if (!met(after, sent)) {
    const gateway = sent.length === 0 ? 'the gateway sends no credential' : `the gateway sends ${sent.join(' or ')}`;
    return list.add('breaking', change, `${gateway}, so every call would be refused`, use.fields);
  }
  // The gateway forwards what the caller has: with a choice of two, a caller with only one may fall short.
  const short = sent.filter((credential) => !met(after, [credential]));
  if (short.length > 0) {
    return list.add('dangerous', change, `callers with only ${short.join(' or ')} would be refused`, use.fields);
  }
  list.add('safe', change, 'the credential the gateway sends still meets it');
}
