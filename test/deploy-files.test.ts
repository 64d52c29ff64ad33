/**
 * The example deployments in deploy/, checked without Docker or Kubernetes: parsed as YAML (and
 * nginx's config read as text), every environment variable they give the gateway is one of its
 * settings with a value it accepts, the replicas listen on every interface, the probes point at
 * /health and /readiness, the load balancer sends to the replicas compose defines, with the client
 * address the replicas trust and the `api_key` header, and the Ingress says what ingress-nginx
 * needs for it. test/deploy-nginx.test.ts runs nginx.conf for real.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig, SETTINGS } from '../src/config/index.js';
import { PROJECT_ROOT } from './helpers/process.js';

const read = (file: string) => readFileSync(`${PROJECT_ROOT}deploy/${file}`, 'utf8');
const KNOWN = new Set<string>(SETTINGS.map((setting) => setting.env));

type ComposeService = {
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, unknown>;
  build?: { context: string; dockerfile: string };
};
const compose = parse(read('docker-compose.yml')) as { services: Record<string, ComposeService> };

type Container = {
  env: { name: string; value?: string; valueFrom?: unknown }[];
  livenessProbe: { httpGet: { path: string; port: string | number } };
  readinessProbe: { httpGet: { path: string; port: string | number } };
  ports: { name: string; containerPort: number }[];
  resources: { limits: { cpu: string; memory: string } };
};
type Manifest = { kind: string; spec: Record<string, unknown> };
const manifests = parseAllDocuments(read('kubernetes/gateway.yaml')).map((document) => document.toJS() as Manifest);
const deployment = manifests.find((manifest) => manifest.kind === 'Deployment');
const containers = (deployment?.spec as { template: { spec: { containers: Container[] } } } | undefined)?.template.spec
  .containers;

/** A value compose would substitute for `${NAME:?message}`: something of the right kind. */
const substituted = (value: string) => value.replace(/\$\{[A-Z_]+:\?[^}]*\}/g, 'https://upstream.example');

describe('deploy/docker-compose.yml', () => {
  const gateways = Object.entries(compose.services).filter(([, service]) => service.build?.dockerfile === 'Dockerfile');

  it('runs two gateway replicas built from the Dockerfile, Redis and nginx', () => {
    expect(gateways.map(([name]) => name)).toEqual(['gateway-1', 'gateway-2']);
    expect(Object.keys(compose.services).sort()).toEqual(['gateway-1', 'gateway-2', 'nginx', 'redis']);
  });

  it('gives the replicas only settings the gateway knows, with values it accepts, and Redis to share', () => {
    for (const [, service] of gateways) {
      const environment = Object.fromEntries(
        Object.entries(service.environment ?? {}).map(([name, value]) => [name, substituted(value)]),
      );
      expect(Object.keys(environment).filter((name) => !KNOWN.has(name))).toEqual([]);
      const config = loadConfig([], { NODE_ENV: 'production', ...environment });
      expect(config.redisUrl).toBe('redis://redis:6379/0');
      expect(config.trustProxyHops).toBe(1);
      // nginx reaches each replica over the compose network, not on its loopback.
      expect(config.host).toBe('0.0.0.0');
    }
  });

  it('checks each replica on /readiness before nginx sends it traffic', () => {
    for (const [, service] of gateways) expect(service.healthcheck?.test.join(' ')).toContain('/readiness');
    expect(compose.services['nginx']?.depends_on).toEqual({
      'gateway-1': { condition: 'service_healthy' },
      'gateway-2': { condition: 'service_healthy' },
    });
  });
});

describe('deploy/nginx.conf', () => {
  const nginx = read('nginx.conf');

  it('balances over the compose replicas on the port the gateway listens on by default', () => {
    const servers = [...nginx.matchAll(/^\s*server\s+([\w-]+):(\d+)/gm)].map(([, host, port]) => `${host}:${port}`);
    const defaultPort = SETTINGS.find((setting) => setting.env === 'PORT')?.default;

    expect(servers).toEqual([`gateway-1:${defaultPort}`, `gateway-2:${defaultPort}`]);
  });

  it("sets X-Forwarded-For to the caller's address: the one hop TRUST_PROXY_HOPS=1 trusts", () => {
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-For \$remote_addr;/);
  });

  it('passes headers with an underscore in their name (api_key) on, for every server', () => {
    const http = nginx.slice(nginx.indexOf('http {'), nginx.indexOf('server {'));

    expect(http).toMatch(/^\s*underscores_in_headers on;/m);
  });

  it("passes the caller's X-Request-Id on when it has one, nginx's own otherwise", () => {
    expect(nginx).toMatch(/map \$http_x_request_id \$req_id \{[^}]*default \$request_id;/);
    expect(nginx).toMatch(/proxy_set_header X-Request-Id \$req_id;/);
  });
});

describe('deploy/kubernetes/gateway.yaml', () => {
  it('has a Deployment, a Service, a HorizontalPodAutoscaler and an Ingress for it', () => {
    expect(manifests.map((manifest) => manifest.kind)).toEqual([
      'Deployment',
      'Service',
      'HorizontalPodAutoscaler',
      'Ingress',
    ]);
    expect(manifests[2]?.spec['scaleTargetRef']).toMatchObject({ kind: 'Deployment', name: 'petstore-gateway' });
  });

  it('sets only settings the gateway knows, with values it accepts, REDIS_URL from a Secret', () => {
    const [container] = containers ?? [];
    const env = container?.env ?? [];

    expect(env.map((variable) => variable.name).filter((name) => !KNOWN.has(name))).toEqual([]);
    expect(env.find((variable) => variable.name === 'REDIS_URL')?.valueFrom).toEqual({
      secretKeyRef: { name: 'petstore-gateway-redis', key: 'url' },
    });
    const values = Object.fromEntries(
      env.flatMap((variable) => (variable.value ? [[variable.name, variable.value]] : [])),
    );
    const config = loadConfig([], { NODE_ENV: 'production', ...values, REDIS_URL: 'redis://redis:6379/0' });
    // The Service reaches the pod on its own address, not on its loopback.
    expect(config.host).toBe('0.0.0.0');
  });

  it('probes liveness on /health and readiness on /readiness, on the container port, with resource limits', () => {
    const [container] = containers ?? [];

    expect(container?.livenessProbe.httpGet.path).toBe('/health');
    expect(container?.readinessProbe.httpGet.path).toBe('/readiness');
    expect(container?.ports).toEqual([{ name: 'http', containerPort: 4000 }]);
    expect(container?.livenessProbe.httpGet.port).toBe('http');
    expect(container?.resources.limits).toEqual({ cpu: '2', memory: '1Gi' });
  });
});

describe('deploy/kubernetes/gateway.yaml: the Ingress', () => {
  const text = read('kubernetes/gateway.yaml');
  const ingress = manifests.find((manifest) => manifest.kind === 'Ingress') as
    (Manifest & { metadata: { annotations: Record<string, string> } }) | undefined;

  it("routes to the Service's http port, taking uploads as large as nginx.conf does, streamed", () => {
    const [, bodySize] = /client_max_body_size (\S+);/.exec(read('nginx.conf')) ?? [];

    expect(ingress?.spec['rules']).toMatchObject([
      { http: { paths: [{ path: '/', backend: { service: { name: 'petstore-gateway', port: { name: 'http' } } } }] } },
    ]);
    expect(ingress?.metadata.annotations).toEqual({
      'nginx.ingress.kubernetes.io/proxy-body-size': bodySize,
      'nginx.ingress.kubernetes.io/proxy-request-buffering': 'off',
    });
  });

  it("says to set ingress-nginx's enable-underscores-in-headers, without which api_key never arrives", () => {
    expect(text).toMatch(/"enable-underscores-in-headers":"true"/);
    expect(text).toMatch(/^#\s+enable-underscores-in-headers: "true"$/m);
  });
});
