// CPU time per request of the server under load and of its PostgreSQL, read from /proc (Linux).
// Steadier than requests/s on a shared machine, and it tells Node's share from the database's.
// Anywhere else, or for a database on another host, the figures are simply left out.
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

const TICK_US = 10_000; // USER_HZ = 100 on Linux

function stat(pid: number): { ppid: number; ticks: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' '); // fields from "state" on
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) }; // utime + stime
  } catch {
    return undefined;
  }
}

function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** CPU ticks of each process in a set, to difference two snapshots per pid. */
export type Snapshot = Map<number, number>;

export function snapshotProcess(pid: number | undefined): Snapshot {
  const out: Snapshot = new Map();
  const s = pid === undefined ? undefined : stat(pid);
  if (pid !== undefined && s) out.set(pid, s.ticks);
  return out;
}

/** The postmaster and all its children (backends, workers). */
export function snapshotPostgres(postmasterPid: number | undefined): Snapshot {
  const out: Snapshot = new Map();
  if (postmasterPid === undefined) return out;
  const pm = stat(postmasterPid);
  if (!pm) return out;
  out.set(postmasterPid, pm.ticks);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const s = stat(pid);
    if (s?.ppid === postmasterPid) out.set(pid, s.ticks);
  }
  return out;
}

/** CPU µs spent between two snapshots; a process born in between counts from zero. */
export function cpuMicros(before: Snapshot, after: Snapshot): number | undefined {
  if (after.size === 0) return undefined;
  let ticks = 0;
  for (const [pid, t] of after) ticks += t - (before.get(pid) ?? 0);
  return ticks * TICK_US;
}

/** The local postmaster serving `url`, when the database runs on this machine and /proc shows it. */
export async function findPostmaster(url: string): Promise<number | undefined> {
  const host = new URL(url).hostname;
  if (!['127.0.0.1', 'localhost', '::1', '[::1]', ''].includes(host)) return undefined;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const backend = rows[0]?.pid;
    if (backend === undefined || comm(backend) !== 'postgres') return undefined;
    const ppid = stat(backend)?.ppid;
    return ppid !== undefined && ['postgres', 'postmaster'].includes(comm(ppid)) ? ppid : undefined;
  } catch {
    return undefined;
  } finally {
    await client.end();
  }
}
