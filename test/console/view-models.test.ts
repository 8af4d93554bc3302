import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { type IncludeArg, readTemplate, type TemplateReads } from './template-reads.js';

// The other half of the typed view models (src/console/view-models.ts). `tsc` holds the pages to
// their models: `page()` takes a view's name and that view's model. This holds the templates to
// the same models: every top-level field a template reads (`it.foo`), and what each `include`
// hands a partial, is checked against the model's property names, read by the TypeScript compiler.
// A field renamed on one side only fails one or the other.

const viewsDir = join(projectRoot, 'src', 'console', 'views');
const modelsFile = join(projectRoot, 'src', 'console', 'view-models.ts');

const config = ts.getParsedCommandLineOfConfigFile(join(projectRoot, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
if (!config) throw new Error('tsconfig.json could not be read');
const program = ts.createProgram([modelsFile], { ...config.options, noEmit: true });
const checker = program.getTypeChecker();
const source = program.getSourceFile(modelsFile)!;
const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(source)!);

function declared(name: string): ts.Type {
  const symbol = exported.find((s) => s.name === name);
  if (!symbol) throw new Error(`view-models.ts exports no ${name}`);
  return checker.getDeclaredTypeOfSymbol(symbol);
}
const names = (t: ts.Type) => new Set(checker.getPropertiesOfType(t).map((p) => p.name));
const member = (t: ts.Type, name: string) => checker.getTypeOfSymbolAtLocation(t.getProperty(name)!, source);
const optional = (t: ts.Type, name: string) => (t.getProperty(name)!.flags & ts.SymbolFlags.Optional) !== 0;

const views = declared('Views');
const pageModels = declared('PageModels');
const partials = declared('Partials');
const documents = declared('Documents');
const layout = declared('LayoutModel');

/** Where each template's model is: a page's, a partial's, a document's or the layout's. */
interface Model {
  template: string;
  type: ts.Type;
  /** How the model is written, for the messages. */
  named: string;
  /** The fields the template's own code is answerable for (a page's, not what page() adds). */
  own: Set<string>;
}

function modelOf(template: string): Model | undefined {
  if (template === 'layout') return { template, type: layout, named: 'LayoutModel', own: new Set() };
  for (const [map, named] of [[views, 'Views'], [partials, 'Partials'], [documents, 'Documents']] as const) {
    if (!map.getProperty(template)) continue;
    const type = map === views ? member(pageModels, template) : member(map, template);
    return { template, type, named: `${named}['${template}']`, own: names(member(map, template)) };
  }
  return undefined;
}

const templates = readdirSync(viewsDir)
  .filter((f) => f.endsWith('.eta'))
  .map((f) => f.slice(0, -'.eta'.length))
  .sort();
const reads = new Map<string, TemplateReads>(templates.map((t) => [t, readTemplate(readFileSync(join(viewsDir, `${t}.eta`), 'utf8'))]));

/** What is wrong with one template against its model; empty when nothing is. */
function problemsOf(template: string, r = reads.get(template)!): string[] {
  const model = modelOf(template);
  if (!model) return [`views/${template}.eta has no model: add it to Views, Partials or Documents in view-models.ts`];
  const fields = names(model.type);
  const problems: string[] = [];
  for (const o of r.opaque) problems.push(`views/${template}.eta uses \`it\` in a way this check cannot follow: ${o.text}`);
  for (const f of r.fields) if (!fields.has(f)) problems.push(`views/${template}.eta reads it.${f}, which ${model.named} lacks`);
  for (const inc of r.includes) problems.push(...includeProblems(template, model, inc.partial, inc.arg));
  return problems;
}

function includeProblems(template: string, model: Model, partial: string, arg: IncludeArg): string[] {
  const at = `views/${template}.eta's include('${partial}')`;
  if (!partials.getProperty(partial)) return [`${at}: ${partial} is not in Partials`];
  const wanted = member(partials, partial);
  const partialReads = reads.get(partial)?.fields ?? new Set<string>();
  if (arg.kind === 'it') {
    return checker.isTypeAssignableTo(model.type, wanted) ? [] : [`${at} hands it the whole \`it\`, which is not a Partials['${partial}']`];
  }
  if (arg.kind === 'field') {
    if (!model.type.getProperty(arg.name)) return []; // reported as a read
    const given = checker.getNonNullableType(member(model.type, arg.name));
    return checker.isTypeAssignableTo(given, wanted) ? [] : [`${at} hands it it.${arg.name}, which is not a Partials['${partial}']`];
  }
  const problems: string[] = [];
  const keys = new Set(arg.keys);
  for (const k of arg.keys) if (!wanted.getProperty(k)) problems.push(`${at} hands it ${k}, which Partials['${partial}'] lacks`);
  for (const p of names(wanted)) if (!optional(wanted, p) && !keys.has(p)) problems.push(`${at} does not hand it ${p}, which Partials['${partial}'] needs`);
  // Eta hands a partial the page's `it` under what the call gives: a field the call leaves out
  // would be read from the page's own.
  for (const f of partialReads) {
    if (!keys.has(f) && model.type.getProperty(f)) problems.push(`${at} leaves out ${f}, so the partial reads the page's it.${f}`);
  }
  return problems;
}

/** The fields a template's model has that nothing rendering it reads. */
function unread(template: string): string[] {
  const model = modelOf(template);
  if (!model) return [];
  const seen = new Set<string>();
  const take = (t: string) => {
    const r = reads.get(t);
    if (!r) return;
    for (const f of r.fields) seen.add(f);
    for (const inc of r.includes) if (inc.arg.kind === 'it') take(inc.partial);
  };
  take(template);
  // A page's layout reads its title and section.
  if (views.getProperty(template)) take('layout');
  return [...model.own].filter((f) => !seen.has(f)).map((f) => `${model.named}.${f} is read by no template`);
}

describe('view models', () => {
  it('finds the reads of a template, through an alias and into its includes', () => {
    const r = readTemplate("<% const c = it; %><%= c.a %><%= it.b.x %><%= it['c'] %><%~ include('p', { k: it.d }) %><%~ include('q', it.e) %><%~ include('r', it) %><% f(it) %>");
    expect([...r.fields].sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(r.includes.map((i) => [i.partial, i.arg])).toEqual([
      ['p', { kind: 'object', keys: ['k'] }],
      ['q', { kind: 'field', name: 'e' }],
      ['r', { kind: 'it' }],
    ]);
    expect(r.opaque.map((o) => o.text)).toEqual(['f(it)']);
  });

  it('fails a template that reads what its model lacks, or hands a partial what it does not take', () => {
    const r = readTemplate("<%= it.hold %><%~ include('messages', { notice: 'Added.' }) %><%~ include('field', { name: 'x', label: 'X', hints: '' }) %><%~ include('nothing', it) %>");
    expect(problemsOf('funds', r)).toEqual([
      "views/funds.eta reads it.hold, which Views['funds'] lacks",
      "views/funds.eta's include('messages') leaves out problem, so the partial reads the page's it.problem",
      "views/funds.eta's include('field') hands it hints, which Partials['field'] lacks",
      "views/funds.eta's include('field') does not hand it errors, which Partials['field'] needs",
      "views/funds.eta's include('field') leaves out errors, so the partial reads the page's it.errors",
      "views/funds.eta's include('nothing'): nothing is not in Partials",
    ]);
  });

  it('has one model for every view, and a view for every model', () => {
    const modelled = [...names(views), ...names(partials), ...names(documents), 'layout'].sort();
    expect(modelled).toEqual(templates);
  });

  it.each(templates)('views/%s.eta reads only what its model has', (template) => {
    expect(problemsOf(template)).toEqual([]);
  });

  it('leaves no field of a model unread', () => {
    expect(templates.flatMap(unread)).toEqual([]);
  });
});
