// @ts-check
/**
 * `npm run example`: the example app of `examples/app/` on a gateway that runs only its documents.
 *
 * 1. installs the app's own dependencies when they are missing (`npm ci` in `examples/app/`: the
 *    gateway's install never brings them) and runs its code generator, which writes the typed
 *    documents and the persisted documents manifest;
 * 2. opens the app's port (APP_PORT, default 5173; 0 picks a free one), so that the app's origin
 *    is known before the gateway starts;
 * 3. starts the gateway as `npm start` does, on the embedded emulator, with the manifest as its
 *    trusted documents and the app's origin as its CORS origin (PORT and the gateway's other
 *    settings are taken from the environment);
 * 4. builds the app for that gateway's URL, serves it, and prints both URLs.
 *
 * Ctrl-C (SIGINT), SIGTERM or SIGHUP stops both: the gateway gets one SIGTERM and its own
 * bounded stop, and is killed if it has not exited {@link STOP_DEADLINE_MS} later. Plain
 * JavaScript run by plain node, so that the signals reach this process and no loader sits between.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** The example app's folder. */
const APP = `${ROOT}examples/app/`;
/** The manifest the app's code generator writes: the gateway's trusted documents. */
const MANIFEST = `${APP}src/gql/persisted-documents.json`;
/** The gateway's own stop ends by SHUTDOWN_GRACE_MS (10 s by default) + 1.6 s; then it is killed. */
const STOP_DEADLINE_MS = 15_000;
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.map': 'application/json' };

/**
 * Runs `npm args` in the app's folder, its output on this process's stderr.
 * @param {string[]} args
 * @param {Record<string, string>} [env]
 */
function npm(args, env = {}) {
  const run = spawnSync('npm', args, { cwd: APP, stdio: ['ignore', 2, 2], env: { ...process.env, ...env } });
  if (run.status !== 0) throw new Error(`npm ${args.join(' ')} in examples/app failed`);
}

/** Installs the app's dependencies when they are missing, and generates its typed documents and manifest. */
function prepareExample() {
  if (!existsSync(`${APP}node_modules/.package-lock.json`)) npm(['ci', '--no-audit', '--no-fund']);
  npm(['run', '--silent', 'codegen', '--', '--errors-only']);
}

/** @returns {string} `npm start`'s command */
function startScript() {
  /** @type {unknown} */
  const project = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'));
  return /** @type {{ scripts: { start: string } }} */ (project).scripts.start;
}

/**
 * Starts the gateway (`npm start`'s command, after its build) and resolves with its GraphQL URL once it listens.
 * @param {string} appOrigin
 */
async function startGateway(appOrigin) {
  const build = spawnSync(process.execPath, ['scripts/build-if-changed.js', 'scripts/build.ts', '--quiet'], {
    cwd: ROOT,
    stdio: ['ignore', 2, 2],
  });
  if (build.status !== 0) throw new Error("the gateway's build failed");
  // `npm start` is `node [flags] dist/main.js`: its words after `node`.
  const start = startScript().split(' ').slice(1);
  const origins = [appOrigin, appOrigin.replace('127.0.0.1', 'localhost')];
  const gateway = spawn(process.execPath, start, {
    cwd: ROOT,
    // Its own process group: a Ctrl-C reaches it once, from this process.
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, EMULATOR: 'true', TRUSTED_DOCUMENTS: MANIFEST, CORS_ORIGINS: origins.join(',') },
  });
  process.on('exit', () => gateway.exitCode === null && gateway.kill('SIGKILL'));
  const url = await new Promise(
    /** @param {(url: string) => void} resolve @param {(error: Error) => void} reject */ (resolve, reject) => {
      let output = '';
      gateway.stdout.on('data', (/** @type {Buffer} */ chunk) => {
        process.stdout.write(chunk);
        output += chunk.toString();
        const ready = /GraphQL gateway ready: (\S+)/.exec(output);
        if (ready?.[1]) resolve(ready[1]);
      });
      gateway.once('exit', () => reject(new Error('the gateway exited before it was ready')));
    },
  );
  return { gateway, url };
}

/**
 * The built app (`examples/app/dist/`), served from memory: the files the build wrote, nothing else.
 * @param {import('node:http').Server} server
 */
function serveApp(server) {
  const files = new Map(readdirSync(`${APP}dist`).map((name) => [`/${name}`, readFileSync(`${APP}dist/${name}`)]));
  files.set('/', files.get('/index.html') ?? Buffer.from(''));
  server.on('request', (request, response) => {
    const path = new URL(request.url ?? '/', 'http://app').pathname;
    const body = files.get(path);
    if (body === undefined) return void response.writeHead(404).end('Not found');
    const type = TYPES[/** @type {keyof typeof TYPES} */ (extname(path) || '.html')] ?? 'application/octet-stream';
    response.writeHead(200, { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-store' }).end(body);
  });
}

/**
 * Asks the gateway to stop (its own bounded stop), and kills it if it has not exited by the deadline.
 * @param {import('node:child_process').ChildProcess} gateway
 */
function stopGateway(gateway) {
  gateway.kill('SIGTERM');
  setTimeout(() => gateway.kill('SIGKILL'), STOP_DEADLINE_MS).unref();
}

/**
 * Listens on `port` of the loopback interface; resolves with the app's URL.
 * @param {import('node:http').Server} server
 * @param {number} port
 * @returns {Promise<string>}
 */
function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once('error', (error) =>
      reject(new Error(`the app cannot listen on port ${port} (set APP_PORT): ${error.message}`)),
    );
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      resolve(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}/`);
    });
  });
}

async function main() {
  const server = createServer();
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let gateway;
  let stopping = false;
  // Armed first: a Ctrl-C during the start stops what has started so far.
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close();
    server.closeAllConnections();
    if (gateway?.exitCode === null) stopGateway(gateway);
  };
  // SIGHUP: the terminal closed. The gateway, in a process group of its own, would outlive it.
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) process.on(signal, stop);

  prepareExample();
  if (stopping) return void (process.exitCode = 1);
  const appUrl = await listen(server, Number(process.env['APP_PORT'] ?? 5173));
  const started = await startGateway(appUrl.slice(0, -1));
  gateway = started.gateway;
  gateway.once('exit', (code) => {
    if (!stopping) console.error(`the gateway exited (code ${code}); stopping the app`);
    server.close();
    server.closeAllConnections();
    console.log('example stopped');
    process.exitCode = stopping && code === 0 ? 0 : 1;
  });
  if (stopping) return stopGateway(gateway);
  npm(['run', '--silent', 'build'], { GRAPHQL_URL: started.url, DEMO_CREDENTIALS: 'true' });
  serveApp(server);
  console.log(`\nThe example app: ${appUrl}\nIts gateway (trusted documents only): ${started.url}\nCtrl-C stops both.`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((/** @type {unknown} */ error) => {
    console.error(`npm run example: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
