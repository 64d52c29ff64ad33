/**
 * How many cores this process may use: the CPUs it may run on (`os.availableParallelism()`,
 * which follows its CPU affinity), bounded by a container's CPU quota, which the core count
 * does not show (a pod limited to 2 CPUs on a 64-core node sees 64 cores).
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** Reads a file's text, or undefined when it cannot be read. */
export type ReadText = (path: string) => string | undefined;

const readText: ReadText = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/**
 * The CPU quota of this process's cgroup, in CPUs (possibly fractional), or undefined when
 * there is none: cgroup v2 `cpu.max` ("200000 100000", or "max 100000" for none), else cgroup
 * v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` (-1 for none), each looked up in the process's
 * own cgroup (from /proc/self/cgroup) and at the root of the mount.
 */
export function cpuQuota(read: ReadText = readText): number | undefined {
  const cgroups = (read('/proc/self/cgroup') ?? '').split('\n');
  // "0::/kubepods/pod…/…" (v2); "4:cpu,cpuacct:/docker/…" (v1).
  const v2Path = cgroups
    .find((line) => line.startsWith('0::'))
    ?.slice(3)
    .trim();
  const v1Path = cgroups
    .map((line) => line.split(':'))
    .find(([, controllers]) => controllers?.split(',').includes('cpu'))?.[2]
    ?.trim();
  for (const dir of unique([v2Path && `/sys/fs/cgroup${v2Path}`, '/sys/fs/cgroup'])) {
    const [quota, period] = (read(`${dir}/cpu.max`) ?? '').trim().split(/\s+/);
    if (quota && period && quota !== 'max' && Number(period) > 0) return Number(quota) / Number(period);
  }
  for (const dir of unique([
    v1Path && `/sys/fs/cgroup/cpu${v1Path}`,
    v1Path && `/sys/fs/cgroup/cpu,cpuacct${v1Path}`,
    '/sys/fs/cgroup/cpu',
    '/sys/fs/cgroup/cpu,cpuacct',
  ])) {
    const quota = Number(read(`${dir}/cpu.cfs_quota_us`));
    const period = Number(read(`${dir}/cpu.cfs_period_us`));
    if (quota > 0 && period > 0) return quota / period;
  }
  return undefined;
}

function unique(paths: readonly (string | undefined)[]): string[] {
  return [...new Set(paths.filter((path): path is string => typeof path === 'string' && path !== ''))].map((path) =>
    path.replace(/\/+$/, ''),
  );
}

/** The cores this process may use: the smaller of its CPUs and its quota rounded up, at least 1. */
export function availableCores(read: ReadText = readText, cpus: number = availableParallelism()): number {
  const quota = cpuQuota(read);
  return Math.max(1, Math.min(cpus, quota === undefined ? cpus : Math.ceil(quota)));
}
