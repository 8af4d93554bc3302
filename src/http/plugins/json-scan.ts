interface Frame {
  /** Member names seen so far; null in an array. */
  names: Set<string> | null;
  /** The member being read (an object) or the element's index (an array), for the path. */
  at: string | number;
  expectingName: boolean;
}

export interface JsonLimits {
  /** Deepest nesting of objects and arrays. */
  maxDepth: number;
  /** Most members and array elements in the whole text. */
  maxValues: number;
}

export type JsonScan =
  | { over: 'depth' | 'values' }
  /** `duplicate`: the path (`a.b`, `items.0.name`) of the first member named twice in one object. */
  | { over?: undefined; duplicate?: string };

/** Told each member of the outer object, in order, with its value's text (duplicates included). */
export type TopLevelMember = (name: string, valueText: string) => void;

/**
 * One pass over a request body before it is parsed, so a hostile body costs a bounded scan and no
 * parse: it stops as soon as the text nests deeper or holds more values than `limits` allow.
 * It also finds the first member named twice in one object (JSON.parse keeps the last of the two,
 * another reader the first: a request that says two things is refused rather than read one way);
 * that answer is only meaningful once the text has parsed. Escapes are decoded before names are
 * compared ("\u0061" is "a"). String contents are skipped with indexOf.
 */
export function scanJson(text: string, limits: JsonLimits, onTopLevelMember?: TopLevelMember): JsonScan {
  const stack: Frame[] = [];
  let values = 0;
  let duplicate: string | undefined;
  /** The outer object's member being read, for `onTopLevelMember`: its name and where its text starts. */
  let member: { name: string; from: number } | undefined;
  const memberEnds = (at: number) => {
    if (member) onTopLevelMember!(member.name, text.slice(member.from, at).trim().replace(/^:/, '').trim());
    member = undefined;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) break; // an unterminated string: the parser says so
      const top = stack[stack.length - 1];
      if (top?.names && top.expectingName) {
        const collecting = onTopLevelMember !== undefined && stack.length === 1;
        if (duplicate === undefined || collecting) {
          const raw = text.slice(i, end + 1);
          let name: string | undefined;
          try {
            name = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
          } catch {
            name = undefined; // a bad escape: the parser says so
          }
          if (name !== undefined && duplicate === undefined && top.names.has(name)) duplicate = [...stack.slice(0, -1).map((f) => f.at), name].join('.');
          if (name !== undefined) (top.names.add(name), (top.at = name));
          if (name !== undefined && collecting) member = { name, from: end + 1 };
        }
        top.expectingName = false;
      }
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (stack.length >= limits.maxDepth) return { over: 'depth' };
      if (++values > limits.maxValues) return { over: 'values' };
      stack.push(c === 0x7b ? { names: new Set(), at: '', expectingName: true } : { names: null, at: 0, expectingName: false });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (stack.length === 1) memberEnds(i);
      stack.pop();
    } else if (c === 0x2c /* , */) {
      if (++values > limits.maxValues) return { over: 'values' };
      if (stack.length === 1) memberEnds(i);
      const top = stack[stack.length - 1];
      if (!top) continue;
      if (top.names) top.expectingName = true;
      else top.at = (top.at as number) + 1;
    }
  }
  return duplicate === undefined ? {} : { duplicate };
}

const UNLIMITED: JsonLimits = { maxDepth: Infinity, maxValues: Infinity };

/** The path of the first member named twice in one object of `text`, which must be valid JSON. */
export function firstDuplicateMember(text: string): string | undefined {
  const scan = scanJson(text, UNLIMITED);
  return scan.over ? undefined : scan.duplicate;
}

/** Each member of the outer object of `text` (valid JSON) with its value's text, in order, duplicates included. */
export function topLevelMembers(text: string): Array<{ name: string; valueText: string }> {
  const members: Array<{ name: string; valueText: string }> = [];
  scanJson(text, UNLIMITED, (name, valueText) => members.push({ name, valueText }));
  return members;
}

/** Whether the quote at `at` is escaped: an odd run of backslashes before it. */
function isEscaped(text: string, at: number): boolean {
  let n = 0;
  for (let j = at - 1; j >= 0 && text.charCodeAt(j) === 0x5c; j--) n++;
  return n % 2 === 1;
}
