import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

/**
 * Every SQL statement written as text in src/, as it reaches PostgreSQL: each string or template
 * literal that starts like a statement, with its `${…}` parts worked out from what the source
 * says: constants (in the file or imported), arithmetic, conditions, calls of the file's own
 * arrow functions with known arguments, and calls of exported functions, which are imported and
 * run (they are pure text builders such as `isoSql`). A statement written with the `sql` tag
 * (src/db/sql.ts) is worked out the same way, run through the tag itself: a value interpolated
 * there that cannot be known from the source is a parameter whatever it is, so it stands as one
 * (`hole`), as it does when a piece builder is called with values known only at run time. A part
 * of the text that depends on a caller's value (a column chosen per call, a piece handed in)
 * cannot be known from the source: such a statement is returned as unresolved, with the part
 * that stopped it.
 */

export interface FoundStatement {
  /** `src/…/file.ts:line` */
  where: string;
  text: string;
}

export interface Unresolved {
  where: string;
  because: string;
}

const STATEMENT = /^\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH)\s/;

/** Where a template's text starts: its head, or after a first part that is empty (`${piece}SELECT …`). */
const templateStart = (t: ts.TemplateLiteral) =>
  ts.isNoSubstitutionTemplateLiteral(t) ? t.text : t.head.text.trim() === '' && t.templateSpans.length > 0 ? t.templateSpans[0]!.literal.text.replace(/^\s*/, '') : t.head.text;

/** `{ name, text }`: a named statement, as pg takes it. */
const isStatementObject = (n: ts.Node) =>
  ts.isObjectLiteralExpression(n) && n.properties.some((p) => p.name !== undefined && ts.isIdentifier(p.name) && p.name.text === 'name');

class Unknown extends Error {}

/**
 * A value known only at run time where only its being a parameter matters: any property of it is
 * another, and the `sql` tag binds it as a parameter (it is no piece of SQL).
 */
const hole = (): unknown => new Proxy({}, { get: (_t, k) => (typeof k === 'symbol' || k === 'then' || k === 'toJSON' ? undefined : hole()) });

type Value = string | number | boolean | null | undefined | Value[] | ((...args: Value[]) => Value) | object;
type Env = Map<string, Value>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Globals a text builder may call (`Object.entries(…)`, `JSON.stringify(…)`). */
const GLOBALS: Record<string, Value> = { Object, JSON, String, Number, Math, Array };

/** A row type as written at a `query<T>(…)` call: each field's name and its type in words (`number | null`). */
export interface TypedQuery {
  where: string;
  /** The texts the call's statement can take (one per variant). */
  texts: string[];
  /** `kinds`: what the field's values are at run time (`number`, `string[]`, `Date`, `object`), or any. */
  fields: Array<{ name: string; type: string; kinds: string[] | 'any' }>;
}

/**
 * The source's reader: every file of src/ with the type checker, and `value`, which works out what
 * an expression gives from what the source says (see collectStatements), with `variants` running
 * each combination of the choices it meets.
 */
const readers = new Map<string, ReturnType<typeof newReader>>();
// Building the TypeScript program takes seconds: the two SQL checks share one per worker.
function reader(root: string) {
  if (!readers.has(root)) readers.set(root, newReader(root));
  return readers.get(root)!;
}

function newReader(root: string) {
  const files = sourceFiles(join(root, 'src'));
  const config = ts.parseJsonConfigFileContent(ts.readConfigFile(join(root, 'tsconfig.json'), (p) => readFileSync(p, 'utf8')).config, ts.sys, root);
  const program = ts.createProgram(files, { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  const parse = (file: string) => program.getSourceFile(file)!;

  /** Whether an expression is a piece of SQL (src/db/sql.ts's `Sql`), whose text matters, rather than a value. */
  const isSqlPiece = (e: ts.Expression) => {
    const type = checker.getTypeAtLocation(e);
    return (type.isUnion() ? type.types : [type]).some((t) => t.symbol?.name === 'Sql');
  };
  /** A value, or a hole where it is known only at run time and is no piece of SQL. */
  async function valueOrHole(sf: ts.SourceFile, e: ts.Expression, env: Env): Promise<Value> {
    try {
      return await value(sf, e, env);
    } catch (error) {
      if (error instanceof Unknown && !isSqlPiece(e)) return hole() as Value;
      throw error;
    }
  }

  /** The values an expression's type allows, when it names them all (`'workspace_id' | 'publisher_id'`, `boolean`). */
  const literalsOf = (e: ts.Expression): Value[] | undefined => {
    const type = checker.getTypeAtLocation(e);
    const members = type.isUnion() ? type.types : [type];
    const values: Value[] = [];
    for (const t of members) {
      if (t.isStringLiteral() || t.isNumberLiteral()) values.push(t.value);
      else if (t.flags & ts.TypeFlags.BooleanLiteral) values.push(checker.typeToString(t) === 'true');
      else return undefined;
    }
    return values.length > 0 && values.length <= 8 ? values : undefined;
  };
  // A statement whose text takes one of several values (a column per target) is prepared once
  // for each: `choose` picks this run's value at each such point, and `variants` runs them all.
  let choose: (options: Value[]) => Value = (o) => o[0];
  let chosen = new Map<ts.Symbol, Value>();
  const modules = new Map<string, Record<string, unknown>>();
  const load = async (file: string) => {
    if (!modules.has(file)) modules.set(file, (await import(pathToFileURL(file).href)) as Record<string, unknown>);
    return modules.get(file)!;
  };

  /** The file an import specifier names (`./x.js` is `./x.ts`). */
  const moduleFile = (from: string, spec: string) => {
    if (!spec.startsWith('.')) return undefined;
    const file = resolve(dirname(from), spec.replace(/\.js$/, '.ts'));
    return existsSync(file) ? file : undefined;
  };

  /** Where a name comes from in a file: its own const, or an import. */
  function declaration(sf: ts.SourceFile, name: string): { init: ts.Expression; sf: ts.SourceFile } | { file: string; imported: string } | undefined {
    for (const st of sf.statements) {
      if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations) {
          if (ts.isIdentifier(d.name) && d.name.text === name && d.initializer) return { init: d.initializer, sf };
        }
      } else if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier) && st.importClause) {
        const file = moduleFile(sf.fileName, st.moduleSpecifier.text);
        if (!file) continue;
        const bindings = st.importClause.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings) && bindings.name.text === name) return { file, imported: '*' };
        if (bindings && ts.isNamedImports(bindings)) {
          for (const el of bindings.elements) {
            if (el.name.text === name) return { file, imported: (el.propertyName ?? el.name).text };
          }
        }
      }
    }
    return undefined;
  }

  async function nameValue(sf: ts.SourceFile, name: string, env: Env): Promise<Value> {
    if (env.has(name)) return env.get(name);
    const found = declaration(sf, name);
    if (!found) throw new Unknown(name);
    if ('init' in found) {
      if (ts.isArrowFunction(found.init)) return arrow(found.sf, found.init);
      return value(found.sf, found.init, new Map());
    }
    if (found.imported === '*') throw new Unknown(name);
    return exported(found.file, found.imported);
  }

  /** An exported value of another file: its const as written, or its function, imported and run. */
  async function exported(file: string, name: string): Promise<Value> {
    const sf = parse(file);
    const found = declaration(sf, name);
    if (found && 'init' in found && !ts.isArrowFunction(found.init)) return value(found.sf, found.init, new Map());
    const v = (await load(file))[name];
    if (typeof v === 'function' || typeof v === 'string' || typeof v === 'number') return v as Value;
    throw new Unknown(name);
  }

  /** A file's own arrow function whose body is an expression, run on known arguments. */
  function arrow(sf: ts.SourceFile, fn: ts.ArrowFunction, outer: Env = new Map()): Value {
    const call = async (...args: Value[]) => {
      if (!ts.isBlock(fn.body)) {
        const env: Env = new Map(outer);
        fn.parameters.forEach((p, i) => {
          if (ts.isIdentifier(p.name)) env.set(p.name.text, args[i]);
          // `([, r]) => …`, `([kind]) => …`: an entry's parts by position.
          else if (ts.isArrayBindingPattern(p.name)) {
            p.name.elements.forEach((el, k) => {
              if (ts.isBindingElement(el) && ts.isIdentifier(el.name)) env.set(el.name.text, (args[i] as Value[])[k]);
            });
          }
        });
        return value(sf, fn.body, env);
      }
      throw new Unknown(fn.getText(sf).slice(0, 40));
    };
    return call as unknown as Value;
  }

  async function value(sf: ts.SourceFile, e: ts.Expression, env: Env): Promise<Value> {
    try {
      return await evaluate(sf, e, env);
    } catch (error) {
      if (!(error instanceof Unknown)) throw error;
      const options = literalsOf(e);
      if (!options) throw error;
      // One name has one value in a run: `lock` in two places is locked in both or neither.
      const symbol = ts.isIdentifier(e) ? checker.getSymbolAtLocation(e) : undefined;
      if (symbol && chosen.has(symbol)) return chosen.get(symbol);
      const picked = choose(options);
      if (symbol) chosen.set(symbol, picked);
      return picked;
    }
  }

  async function evaluate(sf: ts.SourceFile, e: ts.Expression, env: Env): Promise<Value> {
    if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return e.text;
    if (ts.isNumericLiteral(e)) return Number(e.text);
    if (e.kind === ts.SyntaxKind.TrueKeyword) return true;
    if (e.kind === ts.SyntaxKind.FalseKeyword) return false;
    if (e.kind === ts.SyntaxKind.NullKeyword) return null;
    if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e)) return value(sf, e.expression, env);
    if (ts.isTemplateExpression(e)) {
      let text = e.head.text;
      for (const span of e.templateSpans) text += String(await value(sf, span.expression, env)) + span.literal.text;
      return text;
    }
    if (ts.isIdentifier(e)) return e.text in GLOBALS && !env.has(e.text) ? GLOBALS[e.text] : nameValue(sf, e.text, env);
    if (ts.isArrayLiteralExpression(e)) return Promise.all(e.elements.map((x) => value(sf, x, env)));
    if (ts.isRegularExpressionLiteral(e)) {
      const at = e.text.lastIndexOf('/');
      return new RegExp(e.text.slice(1, at), e.text.slice(at + 1));
    }
    if (ts.isObjectLiteralExpression(e)) {
      const out: Record<string, Value> = {};
      for (const p of e.properties) {
        if (ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name))) out[p.name.text] = await value(sf, p.initializer, env);
        else if (ts.isShorthandPropertyAssignment(p)) out[p.name.text] = await value(sf, p.name, env);
        else if (ts.isSpreadAssignment(p)) Object.assign(out, await value(sf, p.expression, env));
        else throw new Unknown(p.getText(sf));
      }
      return out;
    }
    if (ts.isArrowFunction(e)) return arrow(sf, e, env);
    if (ts.isTaggedTemplateExpression(e)) {
      const tag = await value(sf, e.tag, env);
      if (typeof tag !== 'function') throw new Unknown(e.tag.getText(sf));
      const t = e.template;
      const strings = ts.isNoSubstitutionTemplateLiteral(t) ? [t.text] : [t.head.text, ...t.templateSpans.map((span) => span.literal.text)];
      const values = ts.isNoSubstitutionTemplateLiteral(t) ? [] : await Promise.all(t.templateSpans.map((span) => valueOrHole(sf, span.expression, env)));
      return (tag as (...a: unknown[]) => Value)(Object.assign([...strings], { raw: strings }), ...values);
    }
    if (ts.isConditionalExpression(e)) {
      let condition: Value;
      try {
        condition = await value(sf, e.condition, env);
      } catch (error) {
        if (!(error instanceof Unknown)) throw error;
        // A condition known only at run time (`claims ? … : …`): each way is a text of its own,
        // and one name is taken the same way wherever it is tested.
        const symbol = ts.isIdentifier(e.condition) ? checker.getSymbolAtLocation(e.condition) : undefined;
        if (symbol && chosen.has(symbol)) condition = chosen.get(symbol);
        else {
          condition = choose([true, false]);
          if (symbol) chosen.set(symbol, condition);
        }
      }
      return condition ? value(sf, e.whenTrue, env) : value(sf, e.whenFalse, env);
    }
    if (ts.isBinaryExpression(e)) {
      const [l, r] = [await value(sf, e.left, env), await value(sf, e.right, env)];
      switch (e.operatorToken.kind) {
        case ts.SyntaxKind.PlusToken:
          return typeof l === 'number' && typeof r === 'number' ? l + r : String(l) + String(r);
        case ts.SyntaxKind.MinusToken:
          return Number(l) - Number(r);
        case ts.SyntaxKind.AsteriskToken:
          return Number(l) * Number(r);
        default:
          throw new Unknown(e.getText(sf));
      }
    }
    if (ts.isPropertyAccessExpression(e)) {
      if (ts.isIdentifier(e.expression) && !env.has(e.expression.text)) {
        // `ns.fn` of `import * as ns`: the module's export.
        const found = declaration(sf, e.expression.text);
        if (found && 'imported' in found && found.imported === '*') return exported(found.file, e.name.text);
      }
      const target = (await value(sf, e.expression, env)) as Record<string, Value> | null | undefined;
      if (target === null || target === undefined) throw new Unknown(e.getText(sf));
      const v = target[e.name.text];
      return typeof v === 'function' ? (v as (...a: Value[]) => Value).bind(target) : v;
    }
    if (ts.isCallExpression(e)) {
      const fn = await value(sf, e.expression, env);
      if (typeof fn !== 'function') throw new Unknown(e.getText(sf));
      // A builder of a piece of SQL may be given values known only at run time: they are its parameters.
      const builder = isSqlPiece(e);
      const args = await Promise.all(e.arguments.map((a) => (builder ? valueOrHole(sf, a, env) : value(sf, a, env))));
      let out: Value;
      try {
        out = (await fn(...args)) as Value;
      } catch (error) {
        // A builder that does more with a hole than bind it (iterates it) cannot be worked out.
        if (builder && !(error instanceof Unknown)) throw new Unknown(e.getText(sf));
        throw error;
      }
      // A file's own arrow functions run asynchronously: `.map(arrow)` gives promises.
      return Array.isArray(out) ? Promise.all(out) : out;
    }
    throw new Unknown(e.getText(sf));
  }

  /** Every text `run` gives, one per combination of the choices it meets (at most 32). */
  async function variants(run: () => Promise<Value>): Promise<Value[]> {
    const texts = new Set<Value>();
    const queue: number[][] = [[]];
    while (queue.length > 0 && texts.size < 32) {
      const picks = queue.shift()!;
      let depth = 0;
      chosen = new Map();
      choose = (options) => {
        const at = depth++;
        if (at < picks.length) return options[picks[at]!];
        // A choice point first met on this run: the others at it are runs of their own.
        const prefix = [...picks, ...new Array<number>(at - picks.length).fill(0)];
        for (let k = 1; k < options.length; k++) queue.push([...prefix, k]);
        return options[0];
      };
      texts.add(await run());
    }
    return [...texts];
  }

  /** What a statement's expression gives as text: a string, or a piece of SQL numbered as `statement` numbers it. */
  const sqlModule = join(root, 'src', 'db', 'sql.ts');
  async function textOf(v: Value): Promise<Value> {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !('strings' in v && 'values' in v)) return v;
    const { statement } = (await load(sqlModule)) as { statement: (piece: unknown, label: string) => { text: string } };
    return statement(v, 'collected').text;
  }

  return { files, parse, checker, value, variants, textOf };
}

export async function collectStatements(root: string): Promise<{ statements: FoundStatement[]; unresolved: Unresolved[] }> {
  const { files, parse, value, variants, textOf } = reader(root);
  const statements: FoundStatement[] = [];
  const unresolved: Unresolved[] = [];
  for (const file of files) {
    const sf = parse(file);
    const literals: ts.Expression[] = [];
    const visit = (n: ts.Node) => {
      if ((ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) && STATEMENT.test(n.text)) literals.push(n);
      else if (ts.isTaggedTemplateExpression(n) && STATEMENT.test(templateStart(n.template))) literals.push(n);
      else if (ts.isTemplateExpression(n) && STATEMENT.test(n.head.text)) literals.push(n);
      else if (ts.isTemplateExpression(n) && n.head.text === '' && STATEMENT.test(n.templateSpans[0]!.literal.text.replace(/^\s*/, ''))) literals.push(n);
      // A named statement whose text a function builds: `{ name, text: contextsText(false) }`.
      else if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.name) && n.name.text === 'text' && ts.isCallExpression(n.initializer) && isStatementObject(n.parent)) {
        literals.push(n.initializer);
      }
      else ts.forEachChild(n, visit);
    };
    visit(sf);
    // A literal inside an arrow function is reached through its callers (`contextsText(lock)`),
    // which are literals' parts or statement objects; here it is judged with its parameters
    // unknown, so one built only from them is reported as unresolved rather than guessed.
    for (const lit of literals) {
      const where = `${relative(root, file)}:${sf.getLineAndCharacterOfPosition(lit.getStart(sf)).line + 1}`;
      try {
        for (const text of await variants(async () => textOf(await value(sf, lit, new Map())))) statements.push({ where, text: String(text) });
      } catch (error) {
        if (!(error instanceof Unknown)) throw error;
        unresolved.push({ where, because: error.message.split('\n')[0]! });
      }
    }
  }
  return { statements, unresolved };
}

/**
 * Every `….query<T>(statement, …)` call in src/ whose statement can be worked out, with the fields
 * of its row type `T`: a test compares them with the columns PostgreSQL says the statement returns.
 * Calls whose text depends on a caller's value are counted in `unresolved`.
 */
export async function collectTypedQueries(root: string): Promise<{ queries: TypedQuery[]; unresolved: Unresolved[] }> {
  const { files, parse, checker, value, variants, textOf: sqlText } = reader(root);
  /** What values of a type are at run time, in words a column's type can be compared with. */
  const kindsOf = (type: ts.Type): string[] | 'any' => {
    const kinds = new Set<string>();
    for (const t of type.isUnion() ? type.types : [type]) {
      if (t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)) continue;
      if (t.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return 'any';
      if (t.flags & ts.TypeFlags.NumberLike) kinds.add('number');
      else if (t.flags & ts.TypeFlags.StringLike) kinds.add('string');
      else if (t.flags & ts.TypeFlags.BooleanLike) kinds.add('boolean');
      else if (checker.isArrayType(t)) {
        const inner = kindsOf(checker.getTypeArguments(t as ts.TypeReference)[0]!);
        if (inner === 'any') kinds.add('any[]');
        else for (const k of inner) kinds.add(`${k}[]`);
      } else if (t.symbol?.name === 'Date' || t.symbol?.name === 'Buffer') kinds.add(t.symbol.name);
      else kinds.add('object');
    }
    return [...kinds];
  };
  const queries: TypedQuery[] = [];
  const unresolved: Unresolved[] = [];
  for (const file of files) {
    const sf = parse(file);
    const calls: ts.CallExpression[] = [];
    const visit = (n: ts.Node) => {
      if (
        ts.isCallExpression(n) &&
        ts.isPropertyAccessExpression(n.expression) &&
        n.expression.name.text === 'query' &&
        n.typeArguments?.length === 1 &&
        n.arguments.length > 0
      ) {
        calls.push(n);
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
    for (const call of calls) {
      const where = `${relative(root, file)}:${sf.getLineAndCharacterOfPosition(call.getStart(sf)).line + 1}`;
      const rowType = checker.getTypeFromTypeNode(call.typeArguments![0]!);
      const fields = checker.getPropertiesOfType(rowType).map((p) => {
        const type = checker.getTypeOfSymbolAtLocation(p, call);
        return { name: p.name, type: checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation), kinds: kindsOf(type) };
      });
      // The statement as pg takes it: a text, or `{ name, text, values }` (often `{ ...statement, values }`).
      const statement = call.arguments[0]!;
      try {
        const textOf = async (e: ts.Expression): Promise<Value> => {
          // `{ ...statement, values }`: only the text matters, not the caller's values.
          if (ts.isObjectLiteralExpression(e)) {
            let text: Value;
            for (const p of e.properties) {
              if (ts.isSpreadAssignment(p)) text = (await textOf(p.expression)) ?? text;
              else if (p.name && ts.isIdentifier(p.name) && p.name.text === 'text') {
                text = await value(sf, ts.isPropertyAssignment(p) ? p.initializer : p.name as ts.Identifier, new Map());
              }
            }
            return text;
          }
          const v = await sqlText(await value(sf, e, new Map()));
          return typeof v === 'string' ? v : (v as { text?: Value } | null)?.text;
        };
        const texts = (await variants(async () => {
          const text = await textOf(statement);
          if (typeof text !== 'string') throw new Unknown('a statement that is neither a text nor { text }');
          return text;
        })).map(String);
        queries.push({ where, texts, fields });
      } catch (error) {
        if (!(error instanceof Unknown)) throw error;
        unresolved.push({ where, because: (error as Error).message.split('\n')[0]! });
      }
    }
  }
  return { queries, unresolved };
}
