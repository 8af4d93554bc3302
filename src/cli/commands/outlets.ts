import type { Db } from '../../db/handle.js';
import { z } from 'zod';
import { domainsOfOtherPublishers, upsertOutlets, type OutletWithBaseline } from '../../domain/outlets/outlet-upsert.js';
import { publisherExists } from '../../domain/publishers/publisher-service.js';
import { outletStream, runDomainTag } from '../../demo/outlet-generator.js';
import { outletInput, type OutletInput } from '../../domain/outlets/outlet-input.js';
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPath } from '../../domain/text-input.js';
import { CliError, id, readFlags, readInputFile, str, wholeNumber } from '../args.js';
import type { Commands } from '../registry.js';

const MAX_GENERATE = 1_000_000;
/** Generated outlets are upserted in chunks so a million of them never sit in memory at once. */
const GENERATE_CHUNK = 50_000;

async function requirePublisher(pool: Db, publisherId: number): Promise<void> {
  if (!(await publisherExists(pool, publisherId))) throw new CliError(`--publisher: publisher ${publisherId} not found`);
}

export const outletCommands: Commands = {
  'outlets generate': async ({ pool, config, progress }, raw) => {
    const f = readFlags(
      z.object({ publisher: id, count: wholeNumber(1, MAX_GENERATE), seed: wholeNumber(0, 4_294_967_295).default(1) }).strict(),
      raw,
    );
    await requirePublisher(pool, f.publisher);
    // Domains carry a "-<publisher>-<seed>" tag on their first label (pixelpulse-7-1.de): domains
    // are unique per publisher and, upserts refusing foreign domains, two publishers generating
    // with the same seed must not produce the same names; the tag makes that impossible by
    // construction (the generator's own labels contain no digits, so the tag cannot be confused
    // with a collision suffix). The same publisher and seed always give the same domains, so a
    // re-run updates its outlets instead of duplicating them; another seed adds a new set.
    const stream = outletStream(f.count, f.seed, { domainTag: runDomainTag(f.publisher, f.seed) });
    let generated = 0;
    let chunk: OutletWithBaseline[] = [];
    const shown = progress('outlets generate', f.count);
    const flush = async () => {
      const r = await upsertOutlets(pool, f.publisher, chunk, config.FEE_RATE, new Date(), (n) => shown.add(n));
      generated += r.imported + r.updated;
      chunk = [];
    };
    try {
      for (const outlet of stream) {
        chunk.push(outlet);
        if (chunk.length === GENERATE_CHUNK) await flush();
      }
      if (chunk.length) await flush();
    } finally {
      shown.done();
    }
    return { generated };
  },

  'outlets import': async ({ pool, config, progress }, raw) => {
    const f = readFlags(z.object({ publisher: id, file: str }).strict(), raw);
    await requirePublisher(pool, f.publisher);
    const text = await readInputFile(f.file, config.INIT_CWD);

    // Validate every line before writing anything; the first bad line is the error.
    const items: OutletInput[] = [];
    const lineOf = new Map<string, number>(); // domain → line number
    const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.trim() === '') continue;
      const n = i + 1;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch (err) {
        throw new CliError(`line ${n}: invalid JSON (${(err as Error).message})`);
      }
      // PostgreSQL cannot store these as given (one failed the whole import with its own error).
      const unstorable = unstorableTextPath(json);
      if (unstorable !== undefined) throw new CliError(`line ${n}: ${unstorable ? `${unstorable}: ` : ''}${UNSTORABLE_TEXT_MESSAGE}`);
      const parsed = outletInput.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        const path = issue.path.map(String).join('.');
        throw new CliError(`line ${n}: ${path ? `${path}: ` : ''}${issue.message}`);
      }
      const first = lineOf.get(parsed.data.domain);
      if (first !== undefined) throw new CliError(`line ${n}: domain: ${parsed.data.domain} is already on line ${first}`);
      lineOf.set(parsed.data.domain, n);
      items.push(parsed.data);
    }
    if (items.length === 0) return { imported: 0, updated: 0 };

    // upsertOutlets refuses foreign domains too; checking first lets the message name the line.
    const foreign = await domainsOfOtherPublishers(pool, f.publisher, items.map((o) => o.domain));
    if (foreign.length) {
      const n = Math.min(...foreign.map((domain) => lineOf.get(domain)!));
      const domain = items.find((o) => lineOf.get(o.domain) === n)!.domain;
      throw new CliError(`line ${n}: domain: ${domain} belongs to another publisher`);
    }
    const shown = progress('outlets import', items.length);
    try {
      return await upsertOutlets(pool, f.publisher, items, config.FEE_RATE, new Date(), (n) => shown.add(n));
    } finally {
      shown.done();
    }
  },
};
