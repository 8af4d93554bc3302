import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

// The import graph of src/, read from the import lines alone (static imports, re-exports and
// import() with a literal path; type-only imports count too, since a cycle of types is still a
// cycle a reader has to untangle). Bare specifiers (packages) are left out.

export type ImportGraph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const IMPORT_LINE = /(?:^|\n)\s*(?:import|export)\b[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Strips comments so an example in a doc comment is not read as an import. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

export function importsOf(text: string): string[] {
  const found: string[] = [];
  for (const m of withoutComments(text).matchAll(IMPORT_LINE)) found.push((m[1] ?? m[2] ?? m[3])!);
  return found;
}

/** Every file under `srcDir` (paths relative to `root`) → the files of the tree it imports. */
export function importGraph(root: string, srcDir = 'src'): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of sourceFiles(join(root, srcDir))) {
    const targets = new Set<string>();
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
      if (existsSync(target)) targets.add(relative(root, target));
      else if (existsSync(join(target, 'index.ts'))) targets.add(relative(root, join(target, 'index.ts')));
    }
    graph.set(relative(root, file), [...targets].sort());
  }
  return graph;
}

/** The strongly connected components with more than one file (or a file importing itself). */
export function importCycles(graph: ImportGraph): string[][] {
  // Tarjan's algorithm.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!indexOf.has(v)) visit(v);
  return cycles;
}
