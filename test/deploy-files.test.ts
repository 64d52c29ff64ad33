/**
 * The example deployments in deploy/, checked without Docker or Kubernetes: parsed as YAML (and
 * nginx's config read as text), every environment variable they give the gateway is one of its
 * settings with a value it accepts, the replicas listen on every interface, the probes point at
 * /health and /readiness, the load balancer sends to the replicas compose defines, with the client
 * address the replicas trust and the `api_key` header, the Kubernetes example routes the paths
 * nginx.conf routes and no other through the Gateway API, with an image the docs say how to build
 * and push, and a Redis its replicas share. test/deploy-nginx.test.ts runs nginx.conf for real;
 * test/deploy-schemas.test.ts checks every file against its schema.
 */
import { readdirSync, readFileSync } from 'node:fs';
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
  image: string;
  env: { name: string; value?: string; valueFrom?: unknown }[];
  livenessProbe: { httpGet: { path: string; port: string | number } };
  readinessProbe: { httpGet: { path: string; port: string | number } };
  ports: { name: string; containerPort: number }[];
  resources: { limits: { cpu: string; memory: string } };
};
type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  stringData?: Record<string, string>;
};
type PodSpec = { containers: Container[] };
type Template = { metadata: { annotations?: Record<string, string> }; spec: PodSpec };

/** The files of deploy/kubernetes/, each with its manifests. */
const KUBERNETES_FILES = readdirSync(`${PROJECT_ROOT}deploy/kubernetes`).filter((file) => /\.ya?ml$/.test(file));
const manifestsOf = (file: string) =>
  parseAllDocuments(read(`kubernetes/${file}`)).map((document) => document.toJS() as Manifest);
const manifests = KUBERNETES_FILES.flatMap(manifestsOf);
const find = (kind: string, name: string) =>
  manifests.find((manifest) => manifest.kind === kind && manifest.metadata.name === name);
const template = (name: string) => find('Deployment', name)?.spec?.['template'] as Template | undefined;
const containers = template('petstore-gateway')?.spec.containers;

/** The paths deploy/nginx.conf routes to the replicas (its one proxying location's alternatives). */
function nginxPublicPaths(): string[] {
  const [, alternatives, optional] = /location ~ \^\/\(([^)]*)\)(\?)?\$/.exec(read('nginx.conf')) ?? [];
  if (alternatives === undefined) throw new Error('deploy/nginx.conf has no `location ~ ^/(a|b)?$`');
  const paths = alternatives.split('|').map((alternative) => `/${alternative.replaceAll('\\', '')}`);
  return optional === '?' ? [...paths, '/'] : paths;
}

/** A value compose would substitute for `${NAME:?message}` or `${NAME:-}`: something of the right kind. */
const substituted = (value: string) => value.replace(/\$\{[A-Z_]+:[?-][^}]*\}/g, 'https://upstream.example');

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

describe('deploy/kubernetes/', () => {
  it('has the gateway (Deployment, Service, autoscaler, disruption budget), its route and the Redis it shares', () => {
    expect(Object.fromEntries(KUBERNETES_FILES.map((file) => [file, manifestsOf(file).map((m) => m.kind)]))).toEqual({
      'gateway.yaml': ['Deployment', 'Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget'],
      'httproute.yaml': ['HTTPRoute'],
      'redis.yaml': ['Secret', 'Deployment', 'Service', 'NetworkPolicy'],
    });
    expect(find('HorizontalPodAutoscaler', 'petstore-gateway')?.spec?.['scaleTargetRef']).toMatchObject({
      kind: 'Deployment',
      name: 'petstore-gateway',
    });
  });

  it('relies on no ingress controller: no Ingress, no controller annotation', () => {
    expect(manifests.filter((manifest) => manifest.kind === 'Ingress')).toEqual([]);
    for (const file of KUBERNETES_FILES) expect(read(`kubernetes/${file}`)).not.toMatch(/ingress\.kubernetes\.io/);
  });

  it('publishes no pod or Service by itself: every Service is cluster-internal', () => {
    const services = manifests.filter((manifest) => manifest.kind === 'Service');

    expect(services.map((service) => service.spec?.['type'] ?? 'ClusterIP')).toEqual(services.map(() => 'ClusterIP'));
  });
});

describe('deploy/kubernetes/gateway.yaml', () => {
  it('sets only settings the gateway knows, with values it accepts, REDIS_URL from the Secret', () => {
    const [container] = containers ?? [];
    const env = container?.env ?? [];

    expect(env.map((variable) => variable.name).filter((name) => !KNOWN.has(name))).toEqual([]);
    expect(env.find((variable) => variable.name === 'REDIS_URL')?.valueFrom).toEqual({
      secretKeyRef: { name: 'petstore-gateway-redis', key: 'url' },
    });
    const values = Object.fromEntries(
      env.flatMap((variable) => (variable.value ? [[variable.name, variable.value]] : [])),
    );
    const redisUrl = find('Secret', 'petstore-gateway-redis')?.stringData?.['url'] ?? '';
    const config = loadConfig([], { NODE_ENV: 'production', ...values, REDIS_URL: redisUrl });
    // The Service reaches the pod on its own address, not on its loopback.
    expect(config.host).toBe('0.0.0.0');
    expect(config.redisUrl).toBe(redisUrl);
  });

  it('probes liveness on /health and readiness on /readiness, on the container port, with resource limits', () => {
    const [container] = containers ?? [];

    expect(container?.livenessProbe.httpGet.path).toBe('/health');
    expect(container?.readinessProbe.httpGet.path).toBe('/readiness');
    expect(container?.ports).toEqual([{ name: 'http', containerPort: 4000 }]);
    expect(container?.livenessProbe.httpGet.port).toBe('http');
    expect(container?.resources.limits).toEqual({ cpu: '2', memory: '1Gi' });
  });

  it('has Prometheus scrape /metrics on each pod, on the container port', () => {
    expect(template('petstore-gateway')?.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(containers?.[0]?.ports[0]?.containerPort),
      'prometheus.io/path': '/metrics',
    });
  });

  it('runs the image of this release, which docs/deploy.md says how to build and push', () => {
    const version = (JSON.parse(readFileSync(`${PROJECT_ROOT}package.json`, 'utf8')) as { version: string }).version;
    const image = containers?.[0]?.image ?? '';
    const docs = readFileSync(`${PROJECT_ROOT}docs/deploy.md`, 'utf8');

    expect(image).toBe(`registry.example.com/petstore-gateway:${version}`);
    expect(docs).toContain(`docker build -t ${image} .`);
    expect(docs).toContain(`docker push ${image}`);
  });
});

describe('deploy/kubernetes/httproute.yaml', () => {
  const route = find('HTTPRoute', 'petstore-gateway');
  type Rule = { matches: { path: { type: string; value: string } }[]; backendRefs: unknown[] };
  const rules = (route?.spec?.['rules'] ?? []) as Rule[];

  it('routes exactly the paths deploy/nginx.conf routes, and so not /metrics, /readiness or /health', () => {
    const matches = rules.flatMap((rule) => rule.matches.map((match) => match.path));

    expect(matches.map((path) => path.type)).toEqual(matches.map(() => 'Exact'));
    expect(matches.map((path) => path.value).sort()).toEqual(nginxPublicPaths().sort());
    expect(nginxPublicPaths()).not.toEqual(expect.arrayContaining([expect.stringMatching(/metrics|readiness|health/)]));
  });

  it("sends them to the gateway Service's port, through the Gateway the user names", () => {
    const service = find('Service', 'petstore-gateway');
    const port = (service?.spec?.['ports'] as { port: number }[] | undefined)?.[0]?.port;

    expect(route?.spec?.['parentRefs']).toEqual([{ name: expect.any(String) }]);
    expect(rules.map((rule) => rule.backendRefs)).toEqual(rules.map(() => [{ name: 'petstore-gateway', port }]));
  });

  it("says how to let the api_key header through an implementation that refuses underscores (Envoy Gateway's)", () => {
    expect(read('kubernetes/httproute.yaml')).toMatch(/withUnderscoresAction: Allow/);
  });
});

describe('deploy/kubernetes/redis.yaml', () => {
  type Args = { args: string[]; image: string; ports: { name: string; containerPort: number }[] };
  const redis = (template('petstore-gateway-redis')?.spec.containers[0] ?? {}) as Partial<Args>;
  const composeRedis = (
    parse(read('docker-compose.yml')) as { services: Record<string, { image: string; command: string[] }> }
  ).services['redis'];

  it("is the Redis the Secret's URL names: its Service, on its port", () => {
    const url = new URL(find('Secret', 'petstore-gateway-redis')?.stringData?.['url'] ?? '');
    const service = find('Service', 'petstore-gateway-redis');

    expect(url.hostname).toBe(service?.metadata.name);
    expect((service?.spec?.['ports'] as { port: number }[] | undefined)?.[0]?.port).toBe(Number(url.port));
    expect(redis.ports?.[0]?.containerPort).toBe(Number(url.port));
  });

  it('runs as compose runs its Redis: the same image and settings (no persistence, volatile-lru)', () => {
    expect(redis.image).toBe(composeRedis?.image);
    expect(['redis-server', ...(redis.args ?? [])]).toEqual(composeRedis?.command);
  });

  it("lets only the gateway's pods connect", () => {
    expect(find('NetworkPolicy', 'petstore-gateway-redis')?.spec).toEqual({
      podSelector: { matchLabels: { app: 'petstore-gateway-redis' } },
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ podSelector: { matchLabels: { app: 'petstore-gateway' } } }], ports: [{ port: 'redis' }] }],
    });
  });
});
