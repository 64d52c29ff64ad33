/**
 * Summaries of V8 CPU profiles (`node --cpu-prof`): the functions with the most self time, and
 * self time by package, so that `bench/PROFILE.md` can say where the gateway's time goes.
 *
 * Usage: `npm run bench -- --profile` writes the profiles and this summary;
 * `tsx bench/profile.ts <dir>` summarises existing ones.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
};
type CpuProfile = {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
};

/**
 * Where a function lives: a package name, the project's own module, or Node's internals. The
 * profiled build is unbundled (`npm run build -- --modules`: `dist/x.js` per `src/x.ts`), and is
 * named by its source module, so profiles of the compiled gateway and of the sources group the
 * same way.
 */
function owner(url: string): string {
  if (url === '') return '(V8 / native)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules?.[1]) return modules[1];
  if (url.startsWith('node:')) return 'node internals';
  const compiled = /\/dist\/(?:builds\/[^/]+\/)?(.+)\.js$/.exec(url);
  if (compiled?.[1]) return `src/${compiled[1]}.ts`;
  const project = /\/(src|bench)\/(.+)$/.exec(url);
  return project ? `${project[1]}/${project[2]}` : url;
}

/**
 * A function and its place; lines of the compiled build are those of `dist/` (esbuild keeps them close
 * to the source's).
 */
function place(frame: ProfileNode['callFrame']): string {
  const file = frame.url
    .replace(/^.*node_modules\//, '')
    .replace(/^file:\/\/.*\/(src|bench|dist)\/(?:builds\/[^/]+\/)?/, '$1/');
  return `${frame.functionName || '(anonymous)'} ${file ? `${file}:${frame.lineNumber + 1}` : ''}`.trim();
}

/** Self time per function and per owner, in milliseconds, and the profile's total. */
export function selfTimes(profile: CpuProfile): {
  total: number;
  byFunction: Map<string, number>;
  byOwner: Map<string, number>;
} {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let total = 0;
  samples.forEach((id, index) => {
    const node = nodes.get(id);
    const ms = (deltas[index] ?? 0) / 1000;
    if (node === undefined) return;
    total += ms;
    const name = place(node.callFrame);
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
    const who = owner(node.callFrame.url);
    byOwner.set(who, (byOwner.get(who) ?? 0) + ms);
  });
  return { total, byFunction, byOwner };
}

function top(map: Map<string, number>, total: number, count: number): string[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(
      ([name, ms]) => `| ${((ms / total) * 100).toFixed(1)}% | ${ms.toFixed(0)} | \`${name.replace(/\|/g, '\\|')}\` |`,
    );
}

/**
 * The busiest profile of a directory: the main thread's. The compiled gateway with WORKERS=1
 * writes one; a cluster (WORKERS > 1, whose workers inherit `--cpu-prof`) or a gateway under tsx
 * (whose loader thread is idle once the modules are loaded) writes more.
 */
function mainThreadProfile(dir: URL): { file: string; times: ReturnType<typeof selfTimes> } | undefined {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((file) => ({ file, times: selfTimes(JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as CpuProfile) }))
    .sort((a, b) => busy(b.times) - busy(a.times))[0];
}

function busy(times: ReturnType<typeof selfTimes>): number {
  return times.total - (times.byFunction.get('(idle)') ?? 0);
}

/** A Markdown summary of the main-thread profile in each subdirectory (one per scenario) of `dir`. */
export function summariseProfiles(dir: URL): string {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })
    .filter((each) => each.isDirectory())
    .sort((a, b) => a.name.localeCompare(b.name))) {
    const found = mainThreadProfile(new URL(`${entry.name}/`, dir));
    if (found === undefined) continue;
    const { total, byFunction, byOwner } = found.times;
    out.push(
      `### ${entry.name}`,
      '',
      `${(total / 1000).toFixed(1)} s sampled, ${((busy(found.times) / total) * 100).toFixed(0)}% busy (${found.file}).`,
      '',
      '| Self % | Self ms | Owner |',
      '|---:|---:|---|',
      ...top(byOwner, total, 15),
      '',
      '| Self % | Self ms | Function |',
      '|---:|---:|---|',
      ...top(byFunction, total, 25),
      '',
    );
  }
  return out.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dir = process.argv[2] ?? 'bench/.out/profiles/';
  console.log(summariseProfiles(new URL(`file://${process.cwd()}/${dir.endsWith('/') ? dir : `${dir}/`}`)));
}
