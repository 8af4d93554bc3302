/**
 * Progress of a long admin command (a million generated outlets take minutes), drawn on one
 * terminal line of stderr: done of total, rate, time left. Only when stderr is a terminal: piped
 * or redirected, nothing is written, so scripts read the same stdout JSON and an empty stderr.
 */
export interface Progress {
  /** `n` more units done. */
  add(n: number): void;
  /** Clears the line; the command's JSON follows on stdout. */
  done(): void;
}

export type ProgressFactory = (label: string, total: number) => Progress;

export const quietProgress: ProgressFactory = () => ({ add() {}, done() {} });

interface Terminal {
  isTTY?: boolean;
  write(text: string): unknown;
}

const CLEAR_LINE = '\r\x1b[2K';
const count = (n: number) => Math.round(n).toLocaleString('en-US');

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.ceil(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** The line drawn for `done` of `total` after `elapsedMs`. */
export function progressLine(label: string, done: number, total: number, elapsedMs: number): string {
  const pct = total > 0 ? Math.floor((100 * done) / total) : 100;
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const left = rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
  return `${label}: ${count(done)} of ${count(total)} (${pct}%), ${count(rate)}/s, ${duration(left)} left`;
}

/**
 * Progress on `terminal` (process.stderr) when it is a TTY. Redrawn at most every `intervalMs`
 * (the first update is always drawn), so a fast loop does not flood the terminal.
 */
export function terminalProgress(terminal: Terminal, now: () => number = Date.now, intervalMs = 250): ProgressFactory {
  if (!terminal.isTTY) return quietProgress;
  return (label, total) => {
    const started = now();
    let done = 0;
    let drawnAt = Number.NEGATIVE_INFINITY;
    return {
      add(n) {
        done += n;
        const t = now();
        if (t - drawnAt < intervalMs && done < total) return;
        drawnAt = t;
        terminal.write(CLEAR_LINE + progressLine(label, done, total, t - started));
      },
      done() {
        if (drawnAt !== Number.NEGATIVE_INFINITY) terminal.write(CLEAR_LINE);
      },
    };
  };
}
