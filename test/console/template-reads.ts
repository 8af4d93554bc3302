import { Eta } from 'eta';
import ts from 'typescript';

/** What a partial is handed: the page's whole `it`, one of its fields, or an object written in the call. */
export type IncludeArg = { kind: 'it' } | { kind: 'field'; name: string } | { kind: 'object'; keys: string[] };

export interface TemplateReads {
  /** The top-level fields of `it` the template reads (`it.foo`, `it['foo']`, through `const c = it`). */
  fields: Set<string>;
  includes: { partial: string; arg: IncludeArg; line: number }[];
  /** Uses of `it` this reader cannot follow (passed to a function, spread, …): each makes the check fail. */
  opaque: { line: number; text: string }[];
}

// A template is read as Eta runs it: compiled to JavaScript, then parsed by TypeScript's parser.
// The compiler wraps every template in the same preamble and ending (its `include`, `layout`,
// blocks); what lies between them is the template's own code.
const eta = new Eta({ autoEscape: true });
const [preamble, ending] = (() => {
  const marker = '__template_body__';
  const empty = eta.compileToString(`<% ${marker} %>`);
  const at = empty.indexOf(marker);
  return [empty.slice(0, at), empty.slice(at + marker.length)];
})();

/** The template's own code, without the compiler's preamble and ending. */
function bodyOf(template: string): string {
  const code = eta.compileToString(template);
  if (!code.startsWith(preamble) || !code.endsWith(ending)) throw new Error('the Eta compiler wraps templates differently than this reader expects');
  return code.slice(preamble.length, code.length - ending.length);
}

const isInclude = (n: ts.Node): n is ts.CallExpression =>
  ts.isCallExpression(n) && ts.isIdentifier(n.expression) && (n.expression.text === 'include' || n.expression.text === 'includeAsync');

/** The fields, includes and unreadable uses of `it` in one `.eta` template. */
export function readTemplate(template: string): TemplateReads {
  const source = ts.createSourceFile('template.js', `async function template(it) {\n${bodyOf(template)}\n}`, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
  // The line in the compiled code: one statement per output, so close enough to find the spot.
  const lineOf = (n: ts.Node) => source.getLineAndCharacterOfPosition(n.getStart(source)).line;
  const reads: TemplateReads = { fields: new Set(), includes: [], opaque: [] };
  const aliases = new Set(['it']);
  const isIt = (n: ts.Node): n is ts.Identifier => ts.isIdentifier(n) && aliases.has(n.text);

  const visit = (n: ts.Node) => {
    if (isInclude(n)) {
      const [name, arg] = n.arguments;
      if (!name || !ts.isStringLiteral(name)) reads.opaque.push({ line: lineOf(n), text: n.getText(source) });
      else if (!arg) reads.includes.push({ partial: name.text, arg: { kind: 'object', keys: [] }, line: lineOf(n) });
      else if (isIt(arg)) reads.includes.push({ partial: name.text, arg: { kind: 'it' }, line: lineOf(n) });
      else if (ts.isPropertyAccessExpression(arg) && isIt(arg.expression)) {
        reads.includes.push({ partial: name.text, arg: { kind: 'field', name: arg.name.text }, line: lineOf(n) });
      } else if (ts.isObjectLiteralExpression(arg) && arg.properties.every((p) => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name))) {
        reads.includes.push({ partial: name.text, arg: { kind: 'object', keys: arg.properties.map((p) => (p.name as ts.Identifier).text) }, line: lineOf(n) });
      } else reads.opaque.push({ line: lineOf(n), text: n.getText(source) });
      // The argument's own reads of `it` (`value: it.form.email`) are the page's.
      if (arg && !isIt(arg)) visit(arg);
      return;
    }
    if (isIt(n)) {
      const p = n.parent;
      if (ts.isPropertyAccessExpression(p) && p.expression === n) reads.fields.add(p.name.text);
      else if (ts.isElementAccessExpression(p) && p.expression === n && ts.isStringLiteral(p.argumentExpression)) reads.fields.add(p.argumentExpression.text);
      else if (ts.isVariableDeclaration(p) && p.initializer === n && ts.isIdentifier(p.name)) aliases.add(p.name.text);
      else if (!ts.isParameter(p) && !(ts.isPropertyAccessExpression(p) && p.name === n) && !(ts.isPropertyAssignment(p) && p.name === n)) {
        reads.opaque.push({ line: lineOf(n), text: p.getText(source) });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return reads;
}
