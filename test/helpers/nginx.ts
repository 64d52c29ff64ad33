/**
 * Debian's `nginx` as a child process running a deploy/ config for real: the file read from the
 * repository and rewritten only where a test has to (its upstream servers and listen port to
 * loopback ports, its log and temporary paths into a temporary prefix), so that it runs
 * unprivileged, in the foreground, and stops with the test.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/**
 * The nginx executable: on PATH, or where Debian puts it (/usr/sbin, which an unprivileged
 * user's PATH often lacks); undefined when it is not installed.
 */
export function nginxBinary(): string | undefined {
  const directories = [...(process.env['PATH'] ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const directory of directories.filter((entry) => entry !== '')) {
    const candidate = join(directory, 'nginx');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Where a test's nginx runs. */
export type NginxPlacement = {
  /** the upstream servers in the order the config lists them, e.g. `127.0.0.1:41234` */
  upstreams: readonly string[];
  /** the loopback port to listen on */
  port: number;
  /** the temporary prefix: the config, the pid file, the access log and the temporary files go here */
  directory: string;
};

/** Replaces every match of `pattern` (global) and fails when their number is not `expected`. */
function replaceCounted(
  text: string,
  pattern: RegExp,
  expected: number,
  what: string,
  replace: (match: string, index: number) => string,
): string {
  let index = 0;
  const rewritten = text.replace(pattern, (match) => replace(match, index++));
  if (index !== expected) throw new Error(`the nginx config has ${index} ${what}, the test expects ${expected}`);
  return rewritten;
}

/**
 * The config as the test runs it: `server host:port` lines of the upstream block pointed at
 * `upstreams`, `listen` at 127.0.0.1:`port`, every `access_log` into `directory` (format kept),
 * and the temporary paths, which Debian's build puts under /var/lib/nginx, into `directory`.
 * Everything else is the file as it is shipped.
 */
function configForTest(config: string, placement: NginxPlacement): string {
  const { upstreams, port, directory } = placement;
  let text = replaceCounted(
    config,
    /^(\s*server\s+)[\w.-]+:\d+(?=[\s;])/gm,
    upstreams.length,
    'upstream servers',
    (match, index) => match.replace(/[\w.-]+:\d+$/, upstreams[index] ?? ''),
  );
  text = replaceCounted(text, /^(\s*listen\s+)[^\s;]+/gm, 1, 'listen lines', (match) =>
    match.replace(/[^\s;]+$/, `127.0.0.1:${port}`),
  );
  const accessLog = join(directory, 'access.log');
  const hasAccessLog = /^\s*access_log\s/m.test(text);
  text = text.replace(/^(\s*access_log\s+)(?!off\b)\S+?(?=[\s;])/gm, (_match, head: string) => `${head}${accessLog}`);
  const paths = [
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
      (kind) => `  ${kind}_temp_path ${join(directory, `${kind}_temp`)};`,
    ),
    ...(hasAccessLog ? [] : [`  access_log ${accessLog};`]),
  ];
  return replaceCounted(text, /^http\s*\{\n/m, 1, 'http blocks', (match) => `${match}${paths.join('\n')}\n`);
}

export type Nginx = {
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  readonly port: number;
  /** what nginx wrote to stderr (its error log) so far */
  errors(): string;
  /** the access log's lines so far */
  accessLog(): string[];
  /** stops it (SIGTERM: nginx's fast shutdown) and removes its directory */
  stop(): Promise<void>;
};

/**
 * Runs `nginx -p <tmp> -c <tmp>/nginx.conf` with the config rewritten by {@link configForTest},
 * in the foreground, its error log on stderr; resolves once its worker has started.
 */
export async function startNginx(
  binary: string,
  config: string,
  placement: Omit<NginxPlacement, 'directory'>,
): Promise<Nginx> {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-nginx-'));
  // Started by root, nginx runs its worker as `nobody`, which must reach the temporary files in here.
  await chmod(directory, 0o755);
  const configPath = join(directory, 'nginx.conf');
  await writeFile(configPath, configForTest(config, { ...placement, directory }));
  const child = spawn(
    binary,
    [
      '-p',
      `${directory}/`,
      '-c',
      configPath,
      '-g',
      `daemon off; pid ${join(directory, 'nginx.pid')}; error_log stderr notice;`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  // Settles when the process has ended, or could not be started at all.
  const ended = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  const stop = async () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await ended;
    }
    await rm(directory, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`nginx did not start:\n${errors}`)), 10_000);
      const started = () => {
        if (!errors.includes('start worker process ')) return;
        clearTimeout(timer);
        resolve();
      };
      child.stderr.on('data', started);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`nginx could not be run: ${error.message}`));
      });
      void ended.then(() => {
        clearTimeout(timer);
        reject(new Error(`nginx exited at start:\n${errors}`));
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const accessLogPath = join(directory, 'access.log');
  return {
    origin: `http://127.0.0.1:${placement.port}`,
    port: placement.port,
    errors: () => errors,
    accessLog() {
      if (!existsSync(accessLogPath)) return [];
      return readFileSync(accessLogPath, 'utf8')
        .split('\n')
        .filter((line) => line !== '');
    },
    stop,
  };
}
