import { readdirSync, readFileSync } from 'node:fs';

/** The command name may hold spaces. */
function statFields(pid: string | number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // gone meanwhile
  }
}

/** User + system CPU of a process and its children (capture's workers), ms, from /proc. */
export function processCpuMs(pid: number): number {
  const cpuOf = (fields: string[]) =>
    ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  let total = cpuOf(statFields(pid) ?? []);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields && Number(fields[1]) === pid) total += cpuOf(fields);
  }
  return total;
}

/** Linux's USER_HZ, the unit of /proc/<pid>/stat times, on every architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;
