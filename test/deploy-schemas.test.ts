/**
 * Every file of deploy/ that a user hands to a tool is valid for that tool: each manifest of
 * deploy/kubernetes/ against the Kubernetes API's OpenAPI schemas (kubernetes-models) or the
 * Gateway API's CRD schemas (@kubernetes-models/gateway-api), and deploy/docker-compose.yml
 * against the Compose Specification's JSON schema (the copy dclint ships). Both packages carry
 * their schemas compiled or as files: nothing is fetched. A broken copy of each fails, so that a
 * pass means something. test/deploy-files.test.ts checks what the files say; this file checks
 * that the tools would take them.
 *
 * Kubernetes' schemas leave unknown fields open (the API server's strict field validation rejects
 * them): a misspelt field passes here, and test/deploy-files.test.ts reads the fields that matter.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Secret, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { PROJECT_ROOT } from './helpers/process.js';

const read = (file: string) => readFileSync(`${PROJECT_ROOT}deploy/${file}`, 'utf8');

/** A kind the example uses, with the schema its API version has. */
type Schema = { apiVersion: string; kind: string; validate(manifest: Record<string, unknown>): void };

/** The schema of a kubernetes-models class: its constructor takes the manifest, `validate()` throws what is wrong. */
function schemaOf<Data extends object>(model: {
  apiVersion: string;
  kind: string;
  new (data?: Data): { validate(): void };
}): Schema {
  // The manifest is checked, not trusted: the class only holds it for its validator.
  return {
    apiVersion: model.apiVersion,
    kind: model.kind,
    validate: (manifest) => new model(manifest as Data).validate(),
  };
}

/** Every kind deploy/kubernetes/ may use: another kind fails until it is added here, with its schema. */
const SCHEMAS: readonly Schema[] = [
  schemaOf(Deployment),
  schemaOf(Service),
  schemaOf(Secret),
  schemaOf(HorizontalPodAutoscaler),
  schemaOf(PodDisruptionBudget),
  schemaOf(NetworkPolicy),
  schemaOf(HTTPRoute),
];

/** The schema problems of one manifest: `apiVersion kind` unknown, or the validator's message. */
function manifestProblems(manifest: Record<string, unknown>): string | undefined {
  const { apiVersion, kind } = manifest;
  const schema = SCHEMAS.find((candidate) => candidate.apiVersion === apiVersion && candidate.kind === kind);
  if (schema === undefined) return `no schema for ${String(apiVersion)} ${String(kind)}`;
  try {
    schema.validate(manifest);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

const KUBERNETES_FILES = readdirSync(`${PROJECT_ROOT}deploy/kubernetes`).filter((file) => /\.ya?ml$/.test(file));
const manifestsOf = (text: string) =>
  parseAllDocuments(text).map((document) => document.toJS() as Record<string, unknown>);

/** The Compose Specification's schema as dclint ships it (its package exports the package.json, not the file). */
function composeValidator() {
  const packageJson = createRequire(import.meta.url).resolve('dclint/package.json');
  const { $schema: _draft, ...schema } = JSON.parse(
    readFileSync(join(dirname(packageJson), 'schemas', 'compose.schema.json'), 'utf8'),
  ) as Record<string, unknown>;
  // draft-07, ajv's default; `strict: false` for the schema's annotations ajv does not know.
  return new Ajv({ allErrors: true, strict: false }).compile(schema);
}
const validateCompose = composeValidator();
const composeProblems = (text: string) =>
  validateCompose(parse(text))
    ? []
    : (validateCompose.errors ?? []).map((error: ErrorObject) => `${error.instancePath} ${error.message ?? ''}`);

describe('deploy/kubernetes/ against the Kubernetes and Gateway API schemas', () => {
  it.each(KUBERNETES_FILES)('%s: every manifest is valid for its API version and kind', (file) => {
    const manifests = manifestsOf(read(`kubernetes/${file}`));

    expect(manifests.length).toBeGreaterThan(0);
    expect(manifests.map((manifest) => manifestProblems(manifest))).toEqual(manifests.map(() => undefined));
  });

  it('fails a broken copy: a port by name where a number belongs, a path match type that does not exist', () => {
    const deployment = read('kubernetes/gateway.yaml').replace('containerPort: 4000', 'containerPort: http');
    const route = read('kubernetes/httproute.yaml').replace(
      'type: Exact, value: /graphql',
      'type: Exakt, value: /graphql',
    );

    expect(manifestsOf(deployment).map((manifest) => manifestProblems(manifest))[0]).toMatch(
      /containers\/0\/ports\/0\/containerPort must be integer/,
    );
    expect(manifestProblems(manifestsOf(route)[0] ?? {})).toMatch(
      /rules\/0\/matches\/0\/path\/type must be equal to one of the allowed values/,
    );
  });

  it('fails a manifest of a kind it has no schema for', () => {
    expect(manifestProblems({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'x' } })).toBe(
      'no schema for networking.k8s.io/v1 Ingress',
    );
  });
});

describe('deploy/docker-compose.yml against the Compose Specification', () => {
  it('is valid', () => {
    expect(composeProblems(read('docker-compose.yml'))).toEqual([]);
  });

  it('fails a broken copy: a misspelt service key, a dependency condition that does not exist', () => {
    const broken = read('docker-compose.yml')
      .replace('stop_grace_period: 10s', 'stop_grace_periode: 10s')
      .replace('condition: service_healthy', 'condition: service_happy');

    expect(composeProblems(broken)).toEqual(
      expect.arrayContaining([
        '/services/gateway-1 must NOT have additional properties',
        '/services/gateway-1/depends_on/redis/condition must be equal to one of the allowed values',
      ]),
    );
  });
});
