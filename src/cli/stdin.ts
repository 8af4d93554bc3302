import type { Readable } from 'node:stream';

/** Where a command may read its one line of standard input (a password) from. */
export type LineSource = () => Promise<string>;

const MAX_LINE = 4096;

/**
 * The first line of `stream`, without its line ending (`\n` or `\r\n`): it stops reading at the
 * newline, so a person typing at a terminal need not end the input. An empty input is an empty
 * line; a longer line than 4 KiB is refused.
 */
export function firstLine(stream: Readable): LineSource {
  return () =>
    new Promise<string>((resolve, reject) => {
      let text = '';
      const done = (err?: Error) => {
        stream.off('data', onData).off('end', onEnd).off('error', done);
        stream.pause();
        if (err) return reject(err);
        const end = text.indexOf('\n');
        resolve((end === -1 ? text : text.slice(0, end)).replace(/\r$/, ''));
      };
      const onData = (chunk: Buffer | string) => {
        text += String(chunk);
        if (text.includes('\n')) done();
        else if (text.length > MAX_LINE) done(new Error('standard input: the line is longer than 4096 characters'));
      };
      const onEnd = () => done();
      stream.setEncoding('utf8');
      stream.on('data', onData).on('end', onEnd).on('error', done);
      stream.resume();
    });
}

/** A fixed input, for running commands in-process (tests). */
export const fixedInput = (text: string): LineSource => {
  const end = text.indexOf('\n');
  const line = (end === -1 ? text : text.slice(0, end)).replace(/\r$/, '');
  return () => Promise.resolve(line);
};
