/**
 * The Node.js lines the gateway supports, and what the start-up banner says of the one it runs on.
 * An operator's scanner flags a runtime past its end of life (no more security fixes from the
 * Node.js project), so the banner names the version and warns on such a line; the start also logs
 * the warning, for whoever reads the logs rather than the first lines.
 *
 * package.json's `engines` names exactly these lines (test/runtime.test.ts holds them together,
 * with `.nvmrc`, `.node-version`, the Dockerfile's image and the Node.js that CI fetches).
 */

/** A supported release line of Node.js. */
export type NodeLine = {
  /** the line's major version */
  major: number;
  /** the oldest release of the line the gateway and its tools run on (`engines`) */
  minimum: string;
  /** the last day the Node.js project supports the line (YYYY-MM-DD; github.com/nodejs/Release) */
  endOfLife: string;
};

/**
 * The supported lines, oldest first. 20.19 and 22.13 are the first releases of their lines that
 * the build and test tools need (vite, ESLint); 20 stays supported,
 * past its end of life, while the machines that build and test the gateway still run it.
 */
export const NODE_LINES: readonly NodeLine[] = [
  { major: 20, minimum: '20.19.0', endOfLife: '2026-04-30' },
  { major: 22, minimum: '22.13.0', endOfLife: '2027-04-30' },
  { major: 24, minimum: '24.0.0', endOfLife: '2028-04-30' },
  { major: 26, minimum: '26.0.0', endOfLife: '2029-04-30' },
];

/** The line the container image runs, CI tests on as well as the oldest line, and the benchmark measures. */
export const SHIPPED_NODE_LINE = 26;

/** package.json's `engines.node` for {@link NODE_LINES}: `^20.19.0 || ^22.13.0 || …`. */
export function enginesRange(lines: readonly NodeLine[] = NODE_LINES): string {
  return lines.map((line) => `^${line.minimum}`).join(' || ');
}

/** What the start-up says of the runtime: its banner line, and a warning when it is past its end of life. */
export type RuntimeStatus = { line: string; warning: string | undefined };

/** `20.19.2` → [20, 19, 2]. */
function parts(version: string): number[] {
  return version
    .replace(/^v/, '')
    .split(/[.-]/)
    .slice(0, 3)
    .map((part) => Number.parseInt(part, 10) || 0);
}

function older(version: string, than: string): boolean {
  const [a, b] = [parts(version), parts(than)];
  for (let index = 0; index < 3; index += 1) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0);
    if (difference !== 0) return difference < 0;
  }
  return false;
}

/**
 * The runtime line of the start-up banner, and the warning to log, for a Node.js version on a day.
 * @param version `process.versions.node` (`26.12.1`; a leading `v` is read too)
 * @param today the day of the start (its UTC date is compared with the end-of-life dates)
 * @param lines the supported lines @default NODE_LINES
 */
export function runtimeStatus(version: string, today: Date, lines: readonly NodeLine[] = NODE_LINES): RuntimeStatus {
  const shown = `Node.js ${version.replace(/^v/, '')}`;
  const advice = `run Node.js ${SHIPPED_NODE_LINE}, as the container image does`;
  const supported = lines
    .map((line) => (line.minimum === `${line.major}.0.0` ? `${line.major}` : `${line.major} from ${line.minimum}`))
    .join(', ')
    .replace(/\.0(?=,|$)/g, '');
  const line = lines.find((candidate) => candidate.major === parts(version)[0]);
  if (line === undefined || older(version, line.minimum)) {
    const warning = `${shown} is not a release the gateway supports (lines ${supported}); ${advice}`;
    return { line: `Runtime: ${shown}, NOT SUPPORTED (lines ${supported}); ${advice}`, warning };
  }
  const day = today.toISOString().slice(0, 10);
  if (day <= line.endOfLife)
    return { line: `Runtime: ${shown} (supported until ${line.endOfLife})`, warning: undefined };
  const warning =
    `${shown} is past its end of life (${line.endOfLife}): it gets no security fixes from the Node.js project; ` +
    advice;
  return { line: `Runtime: ${shown}, PAST ITS END OF LIFE (${line.endOfLife}): no security fixes; ${advice}`, warning };
}
