// Runs the server with glibc's malloc told to serve every buffer of 64 KiB or more from a mapping
// of its own (MALLOC_MMAP_THRESHOLD_). Left to itself, glibc raises that threshold each time it
// frees such a mapping, up to 32 MiB: after the search index's big arrays are first freed (a
// reload after a nightly traffic refresh), the next index's arrays come from the heap, whose freed
// holes glibc keeps. At 1,000,000 outlets that kept the process 80–115% above its fresh size. At
// 128 KiB it still kept 16–21% more: a reload reads the catalog through thousands of 64 KiB socket
// buffers, which left holes in the heap; at 64 KiB, 8% (docs/search.md, "Bounded memory").
// glibc reads the variable only when a process starts, so without it the server runs as a child
// process that has it; the parent forwards the stop signals and exits as the child did.
import { spawn } from 'node:child_process';

export const ALLOCATOR_ENV = { MALLOC_MMAP_THRESHOLD_: '65536' };

/** Imports `entry` (a file path) in this process, or runs it in a child with the setting. */
export async function runWithAllocatorSetting(entry) {
  if (process.platform !== 'linux' || process.env.MALLOC_MMAP_THRESHOLD_ !== undefined) {
    await import(entry);
    return;
  }
  const child = spawn(process.execPath, [...process.execArgv, entry], { stdio: 'inherit', env: { ...process.env, ...ALLOCATOR_ENV } });
  // A terminal's Ctrl-C reaches both processes, a service manager's SIGTERM only this one: the
  // child drains and stops on either (twice is the same as once).
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) {
      for (const s of signals) process.removeAllListeners(s);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}
