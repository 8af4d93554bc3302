import { beforeAll, describe, expect, it } from 'vitest';
import { upsertOutlets } from '../../src/domain/outlets/outlet-upsert.js';
import type { OutletInput } from '../../src/domain/outlets/outlet-input.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { detectLanguage } from '../../src/domain/planning/language.js';
import { setupApp } from '../helpers/app.js';
import { offerInput, outletInput } from '../helpers/catalog.js';
import { bearer, type WorkspaceFixture, workspaceWithKeys } from '../helpers/fixtures.js';
import { connect, fails, listen, ok } from '../mcp/helpers.js';

const h = await setupApp();
const url = await listen(h);

const outlet = (domain: string, over: Partial<OutletInput>): OutletInput =>
  outletInput(domain, { topics: ['travel'], traffic: { monthly_visits: 80_000, verified: true }, offers: [offerInput({ publisher_price_cents: 5_000 })], ...over });

// Travel outlets in five languages; every one has the topic `travel`, so only a language rule
// (asked or detected) can tell them apart for a travel goal.
const catalog = [
  outlet('family-travel.example', { name: 'Family Travel Guide', topics: ['travel', 'parenting'], description: 'Travel tips for families with kids.' }),
  outlet('roadtrip.example', { name: 'Road Trip Weekly', country: 'GB', description: 'Road trips and holidays.' }),
  outlet('reisen-kinder.example', { name: 'Reisen mit Kindern', country: 'DE', language: 'de', topics: ['travel', 'parenting'], description: 'Reisetipps für Familien mit Kindern.' }),
  outlet('urlaub.example', { name: 'Urlaub Heute', country: 'AT', language: 'de', description: 'Reiseberichte und Urlaub in Europa.' }),
  outlet('voyage-famille.example', { name: 'Voyage en Famille', country: 'FR', language: 'fr', description: 'Conseils de voyage pour les familles.' }),
  outlet('viajes.example', { name: 'Viajes Hoy', country: 'ES', language: 'es', description: 'Viajes y vacaciones.' }),
];

let ws: WorkspaceFixture;
beforeAll(async () => {
  const pub = await createPublisher(h.database.pool, 'Language publisher');
  await upsertOutlets(h.database.pool, pub.id, [...catalog], 0.2);
  // The planner reads the search index, which learns of the import by notification: wait for it.
  await h.app.searchEngine.catchUp();
  ws = await workspaceWithKeys(h.database.pool);
});

interface Plan {
  items: { outlet: { domain: string; language: string }; why: string }[];
  message: string;
}
const plan = async (payload: Record<string, unknown>): Promise<Plan> => {
  const res = await h.app.inject({ method: 'POST', url: '/api/v1/plan', headers: bearer(ws.readKey), payload });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
};
const languages = (p: Plan) => [...new Set(p.items.map((i) => i.outlet.language))].sort();
const domains = (p: Plan) => p.items.map((i) => i.outlet.domain).sort();

describe('POST /api/v1/plan and MCP plan-campaign: languages asked for — happy', () => {
  it('keeps a REST plan to the languages given (any case), and says so', async () => {
    const p = await plan({ goal: 'travel', budget_usd: 1_000, languages: ['DE', 'fr'] });
    expect(domains(p)).toEqual(['reisen-kinder.example', 'urlaub.example', 'voyage-famille.example']);
    expect(p.message).toMatch(/ Outlets in German \(de\) or French \(fr\), as asked\.$/);
  });

  it('keeps an MCP plan to them too, with the same answer as REST', async () => {
    const client = await connect(url, ws.readKey);
    const args = { goal: 'Promote our new travel app to families with kids', budget_usd: 1_000, languages: ['es'] };
    const viaMcp = await ok<Plan>(client, 'plan-campaign', args);
    expect(domains(viaMcp)).toEqual(['viajes.example']);
    expect(viaMcp.message).toMatch(/ Outlets in Spanish \(es\), as asked\.$/);
    expect(viaMcp).toEqual(await plan(args));
  });

  it('answers an empty plan naming the language when no outlet writes in it', async () => {
    const p = await plan({ goal: 'travel', budget_usd: 1_000, languages: ['ja'] });
    expect(p.items).toEqual([]);
    expect(p.message).toBe(
      'Empty plan: no outlet writing in Japanese (ja) has an active offer. Widen the countries, languages or formats. Outlets in Japanese (ja), as asked.',
    );
  });
});

describe('POST /api/v1/plan and MCP plan-campaign: language codes that are not ISO 639-1 — errors', () => {
  it('refuses codes that are not ISO 639-1, naming the element (REST and MCP)', async () => {
    const fieldsOf = async (value: unknown) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/v1/plan',
        headers: bearer(ws.readKey),
        payload: { goal: 'travel', budget_usd: 100, languages: value },
      });
      expect(res.statusCode, JSON.stringify(value)).toBe(422);
      expect(res.json().code).toBe('invalid_input');
      return res.json().errors;
    };
    expect(await fieldsOf('de')).toEqual({ languages: ['must be an array of ISO 639-1 language codes'] });
    expect(await fieldsOf(['de', 'xx'])).toEqual({ 'languages.1': ['must be an ISO 639-1 language code'] });
    expect(await fieldsOf(['deu'])).toEqual({ 'languages.0': ['must be an ISO 639-1 language code'] });
    expect(await fieldsOf(['en', 42])).toEqual({ 'languages.1': ['must be an ISO 639-1 language code'] });
    expect(await fieldsOf(['d3'])).toEqual({ 'languages.0': ['must be an ISO 639-1 language code'] });
    const client = await connect(url, ws.readKey);
    const body = await fails(client, 'plan-campaign', { goal: 'travel', budget_usd: 100, languages: ['en', 'zz'] }, 'invalid_input');
    expect(body.errors).toEqual({ 'languages.1': ['must be an ISO 639-1 language code'] });
  });
});

describe('POST /api/v1/plan and MCP plan-campaign: the goal’s language, when none is asked for — happy', () => {
  it('detects a German goal and an English one; a short or mixed goal gets no language', async () => {
    expect(await detectLanguage('Wir suchen Reiseblogs für Familien mit Kindern')).toBe('de');
    expect(await detectLanguage('Unsere neue Travel App für Familien mit Kindern bekannt machen')).toBe('de');
    expect(await detectLanguage('Promote our new travel app to families with kids')).toBe('en');
    // Too few words to tell: keywords and names read as some language as easily as any other.
    expect(await detectLanguage('hotels in Berlin')).toBeUndefined();
    expect(await detectLanguage('Urlaub mit Kindern')).toBeUndefined();
    expect(await detectLanguage('best pizza in Rome')).toBeUndefined();
  });

  it('keeps a German goal to German outlets and says why', async () => {
    // 'travel' is in every outlet's topics: only the language keeps the others out.
    const goal = 'Unsere neue Travel App für Familien mit Kindern bekannt machen';
    const p = await plan({ goal, budget_usd: 1_000 });
    expect(domains(p)).toEqual(['reisen-kinder.example', 'urlaub.example']);
    expect(p.message).toMatch(/ Outlets in German \(de\) only, the language of your goal; send languages to choose others\.$/);
    // Its words count as ever: the outlet whose description holds more of them comes first.
    expect(p.items[0]!.outlet.domain).toBe('reisen-kinder.example');
    expect(p.items[0]!.why).toMatch(/'familien'.* in its description/);
    expect(languages(await plan({ goal, budget_usd: 1_000, languages: ['de', 'en', 'fr', 'es'] }))).toEqual(['de', 'en', 'es', 'fr']);
  });

  it('keeps an English goal to English outlets (MCP)', async () => {
    const client = await connect(url, ws.readKey);
    const p = await ok<Plan>(client, 'plan-campaign', { goal: 'Promote our new travel app to families with kids', budget_usd: 1_000 });
    expect(languages(p)).toEqual(['en']);
    expect(domains(p)).toEqual(['family-travel.example', 'roadtrip.example']);
    expect(p.message).toMatch(/ Outlets in English \(en\) only, the language of your goal; send languages to choose others\.$/);
  });

  it('does not restrict a short goal, and says it could not tell', async () => {
    const p = await plan({ goal: 'family travel', budget_usd: 1_000 });
    expect(languages(p)).toEqual(['de', 'en', 'es', 'fr']);
    expect(p.message).toMatch(/ Outlets in any language: your goal is too short to tell its language \(send languages to choose\)\.$/);
    // An empty list is no list: the same plan.
    expect(await plan({ goal: 'family travel', budget_usd: 1_000, languages: [] })).toEqual(p);
  });

  it('takes any language when no outlet in the goal’s one fits the other filters, and says so', async () => {
    const p = await plan({ goal: 'Promote our new travel app to families with kids', budget_usd: 1_000, countries: ['DE', 'AT'] });
    expect(domains(p)).toEqual(['reisen-kinder.example', 'urlaub.example']);
    expect(p.message).toMatch(
      / Your goal reads as English \(en\), but no outlet in that language has a fitting offer, so outlets in any language were considered\.$/,
    );
  });
});

describe('POST /api/v1/plan: the goal’s words, read as outlet search reads them — happy', () => {
  it('finds candidates for a word with a typo through its nearest catalog words', async () => {
    const right = await plan({ goal: 'travel', budget_usd: 1_000 });
    const typo = await plan({ goal: 'travl', budget_usd: 1_000 });
    expect(right.items.length).toBe(catalog.length);
    expect(domains(typo)).toEqual(domains(right));
    expect(typo.message).not.toMatch(/ranked by traffic, track record and cost only/);
    for (const i of typo.items) expect(i.why).toMatch(/^Matches 'travl' in its (name or domain|topics);/);
  });

  it('finds a typo in a sentence too, within the detected language', async () => {
    const p = await plan({ goal: 'Promote our new app to familes who love to travl', budget_usd: 1_000 });
    expect(domains(p)).toEqual(['family-travel.example', 'roadtrip.example']);
    const first = p.items.find((i) => i.outlet.domain === 'family-travel.example')!;
    expect(first.why).toMatch(/'travl'/);
    expect(first.why).toMatch(/'familes'/);
  });
});

describe('GET /openapi.json: languages of POST /api/v1/plan — happy', () => {
  it('documents languages in the OpenAPI document', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const body = doc.paths['/api/v1/plan'].post.requestBody.content['application/json'].schema;
    const props = body.properties ?? doc.components.schemas[body.$ref.split('/').pop()].properties;
    expect(props.languages).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(props.languages.description).toMatch(/ISO 639-1/);
  });
});
