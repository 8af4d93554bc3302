// The search index's bitset work with three bitset implementations, at the size of the 1M catalog
// (1,000,000 slots): plain Uint32Array words (what the index does by hand), typedfastbitset's
// TypedFastBitSet (the same words behind a library's methods) and roaring-wasm's compressed
// RoaringBitmap32. One search's work: the union of a word's forms' posting lists, ANDed with two
// filters, counted, split into two ranking buckets by the name matches, each counted, and a walk
// of the traffic order testing bits until 15 are found. Densities as in the generated catalog: a
// broad word in 30% of outlets, a middling one in 3%, a rare one in 0.05%; filters in 10% and 90%.
//   node --import tsx bench/search/bitsets.ts [--rounds 5]
import { parseArgs } from 'node:util';
import { RoaringBitmap32, roaringLibraryInitialize } from 'roaring-wasm';
import { TypedFastBitSet } from 'typedfastbitset';
import { mulberry32 } from '../../src/demo/outlet-generator.js';

const { values: opts } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
await roaringLibraryInitialize();

const N = 1_000_000;
const rnd = mulberry32(34);
const postings = (share: number) => Int32Array.from({ length: N }, (_, i) => i).filter(() => rnd() < share);
const order = Int32Array.from({ length: N }, (_, i) => i).sort(() => rnd() - 0.5);

interface Case {
  name: string;
  forms: Int32Array[];
  names: Int32Array[];
}
const cases: Case[] = [
  { name: 'broad word (30%)', forms: [postings(0.2), postings(0.1), postings(0.02)], names: [postings(0.05)] },
  { name: 'middling word (3%)', forms: [postings(0.02), postings(0.01)], names: [postings(0.005)] },
  { name: 'rare word (0.05%)', forms: [postings(0.0005)], names: [postings(0.0001)] },
];
const filters = [postings(0.1), postings(0.9)];

// --- plain words ---------------------------------------------------------------------------
const words = (slots: Int32Array) => {
  const b = new Uint32Array((N + 31) >>> 5);
  for (const s of slots) b[s >>> 5]! |= 1 << (s & 31);
  return b;
};
const popcount = (b: Uint32Array) => {
  let n = 0;
  for (let i = 0; i < b.length; i++) {
    let x = b[i]!;
    if (x === 0) continue;
    x -= (x >>> 1) & 0x55555555;
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    n += (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }
  return n;
};
const plainFilters = filters.map(words);
function plain(c: Case): number {
  const u = new Uint32Array((N + 31) >>> 5);
  for (const f of c.forms) for (const s of f) u[s >>> 5]! |= 1 << (s & 31);
  for (const f of plainFilters) for (let i = 0; i < u.length; i++) u[i]! &= f[i]!;
  const names = new Uint32Array(u.length);
  for (const f of c.names) for (const s of f) names[s >>> 5]! |= 1 << (s & 31);
  const inName = new Uint32Array(u.length);
  const rest = new Uint32Array(u.length);
  for (let i = 0; i < u.length; i++) {
    inName[i] = u[i]! & names[i]!;
    rest[i] = u[i]! & ~names[i]!;
  }
  let found = 0;
  for (let i = 0; i < N && found < 15; i++) if ((rest[order[i]! >>> 5]! & (1 << (order[i]! & 31))) !== 0) found++;
  return popcount(u) + popcount(inName) + popcount(rest) + found;
}

// --- typedfastbitset -----------------------------------------------------------------------
const fast = (slots: Int32Array) => new TypedFastBitSet(undefined, words(slots));
const fastFilters = filters.map(fast);
function fastBitSet(c: Case): number {
  const u = new TypedFastBitSet(undefined, new Uint32Array((N + 31) >>> 5));
  for (const f of c.forms) for (const s of f) u.add(s);
  for (const f of fastFilters) u.intersection(f);
  const names = new TypedFastBitSet(undefined, new Uint32Array((N + 31) >>> 5));
  for (const f of c.names) for (const s of f) names.add(s);
  const inName = u.new_intersection(names);
  const rest = u.new_difference(names);
  let found = 0;
  for (let i = 0; i < N && found < 15; i++) if (rest.has(order[i]!)) found++;
  return u.size() + inName.size() + rest.size() + found;
}

// --- roaring-wasm (posting lists kept as roaring bitmaps, as such an index would) -----------
const roaring = (slots: Int32Array) => {
  const r = new RoaringBitmap32();
  r.addMany(Uint32Array.from(slots));
  return r;
};
const roaringFilters = filters.map(roaring);
const roaringCases = cases.map((c) => ({ forms: c.forms.map(roaring), names: c.names.map(roaring) }));
function roaringWasm(i: number): number {
  const c = roaringCases[i]!;
  const u = RoaringBitmap32.orMany(c.forms);
  for (const f of roaringFilters) u.andInPlace(f);
  const names = RoaringBitmap32.orMany(c.names);
  const inName = RoaringBitmap32.and(u, names);
  const rest = RoaringBitmap32.andNot(u, names);
  let found = 0;
  for (let j = 0; j < N && found < 15; j++) if (rest.has(order[j]!)) found++;
  const n = u.size + inName.size + rest.size + found;
  for (const b of [u, names, inName, rest]) b.dispose();
  return n;
}

const time = (fn: () => number) => {
  const t = performance.now();
  const n = fn();
  return { ms: performance.now() - t, n };
};
const rounds = Number(opts.rounds);
// The machine is shared: the minimum and the median over rounds say more than any one round.
const taken = cases.map(() => ({ plain: [] as number[], fast: [] as number[], roaring: [] as number[] }));
for (let r = 1; r <= rounds; r++) {
  cases.forEach((c, i) => {
    const a = time(() => plain(c));
    const b = time(() => fastBitSet(c));
    const d = time(() => roaringWasm(i));
    if (a.n !== b.n || a.n !== d.n) throw new Error(`the implementations disagree on ${c.name}: ${a.n}, ${b.n}, ${d.n}`);
    taken[i]!.plain.push(a.ms);
    taken[i]!.fast.push(b.ms);
    taken[i]!.roaring.push(d.ms);
  });
}
const fmt = (ms: number[]) => {
  const s = [...ms].sort((x, y) => x - y);
  return `${s[0]!.toFixed(2)} / ${s[Math.floor(s.length / 2)]!.toFixed(2)} ms`;
};
console.log(`min / median of ${rounds} rounds:`);
cases.forEach((c, i) => {
  const t = taken[i]!;
  console.log(`  ${c.name.padEnd(20)} plain ${fmt(t.plain)}   typedfastbitset ${fmt(t.fast)}   roaring-wasm ${fmt(t.roaring)}`);
});
// What the posting lists cost to hold: per slot list as sorted int32 (the index today) against
// one roaring bitmap per list (serialized size, a lower bound for its WASM heap).
const lists = cases.flatMap((c) => [...c.forms, ...c.names]);
const int32Bytes = lists.reduce((a, l) => a + l.byteLength, 0);
const roaringBytes = roaringCases.flatMap((c) => [...c.forms, ...c.names]).reduce((a, b) => a + b.getSerializationSizeInBytes(true), 0);
console.log(`these ${lists.length} posting lists: sorted int32 ${(int32Bytes / 2 ** 20).toFixed(1)} MB, roaring ${(roaringBytes / 2 ** 20).toFixed(1)} MB`);
