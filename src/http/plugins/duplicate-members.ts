interface Frame {
  /** Member names seen so far; null in an array. */
  names: Set<string> | null;
  /** The member being read (an object) or the element's index (an array), for the path. */
  at: string | number;
  expectingName: boolean;
}

/**
 * The path (`a.b`, `items.0.name`) of the first member named twice in one object of `text`, which
 * must be valid JSON. JSON.parse keeps the last of the two, another reader the first: a request
 * that says two things is refused rather than read one way. Escapes are decoded before names are
 * compared ("\u0061" is "a"). One pass, skipping string contents with indexOf.
 */
export function firstDuplicateMember(text: string): string | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = text.indexOf('"', i + 1);
      while (isEscaped(text, end)) end = text.indexOf('"', end + 1);
      const top = stack[stack.length - 1];
      if (top?.names && top.expectingName) {
        const raw = text.slice(i, end + 1);
        const name: string = raw.includes('\\') ? JSON.parse(raw) : raw.slice(1, -1);
        if (top.names.has(name)) return [...stack.slice(0, -1).map((f) => f.at), name].join('.');
        top.names.add(name);
        top.at = name;
        top.expectingName = false;
      }
      i = end;
    } else if (c === 0x7b /* { */) {
      stack.push({ names: new Set(), at: '', expectingName: true });
    } else if (c === 0x5b /* [ */) {
      stack.push({ names: null, at: 0, expectingName: false });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1]!;
      if (top.names) top.expectingName = true;
      else top.at = (top.at as number) + 1;
    }
  }
  return undefined;
}

/** Whether the quote at `at` is escaped: an odd run of backslashes before it. */
function isEscaped(text: string, at: number): boolean {
  let n = 0;
  for (let j = at - 1; j >= 0 && text.charCodeAt(j) === 0x5c; j--) n++;
  return n % 2 === 1;
}
