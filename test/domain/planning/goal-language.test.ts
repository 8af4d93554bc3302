import { describe, expect, it } from 'vitest';
import { detectLanguage, languageLabel, isLanguageCode, MIN_WORDS_TO_DETECT } from '../../../src/domain/planning/language.js';

// Goals as buyers write them, with the language they are written in. The numbers in
// docs/planner.md (which detector, which threshold) were measured on this set.
const labelled: [string, string][] = [
  ['en', 'Launch our family travel app'],
  ['en', 'Promote our new vegan cookbook to home cooks'],
  ['en', 'We want backlinks for our fintech startup from finance blogs'],
  ['en', 'budget travel tips for students'],
  ['en', 'Get our SaaS product in front of small business owners'],
  ['en', 'Grow awareness of our dental clinic in London'],
  ['en', 'Sell more running shoes to marathon runners'],
  ['en', 'Press coverage for our Series A funding round'],
  ['en', 'Reach parents looking for educational toys'],
  ['en', 'Promote a new hotel opening in Munich'],
  ['en', 'Links from tech news sites for our AI assistant'],
  ['en', 'Our crypto exchange needs coverage in finance media'],
  ['en', 'Find gardening blogs to review our seed kits'],
  ['en', 'Boost SEO for an online furniture store'],
  ['en', 'Guest posts about sustainable fashion'],
  ['en', 'Announce our podcast about personal finance'],
  ['en', 'Reach gamers with our new indie game'],
  ['en', 'Raise awareness of our charity for homeless people'],
  ['en', 'travel insurance for backpackers'],
  ['en', 'pet food subscription for dog owners'],
  ['en', 'local news coverage for our bakery'],
  ['en', 'health and fitness app for seniors'],
  ['en', 'We are a Berlin startup selling e-bikes'],
  ['en', 'Promote Oktoberfest tours from Munich'],
  ['de', 'Wir möchten unsere neue Reise-App für Familien bekannt machen'],
  ['de', 'Reiseblogs für unsere Familienhotels'],
  ['de', 'Werbung für unser Restaurant in München'],
  ['de', 'Unser Onlineshop für nachhaltige Mode braucht mehr Sichtbarkeit'],
  ['de', 'Urlaub mit Kindern'],
  ['de', 'Gastbeiträge über gesunde Ernährung'],
  ['de', 'Backlinks für unsere Zahnarztpraxis in Berlin'],
  ['de', 'Mehr Kunden für unser Fahrradgeschäft'],
  ['de', 'Pressemitteilung zur Eröffnung unseres Hotels'],
  ['de', 'Neue Software für kleine Unternehmen bewerben'],
  ['de', 'Artikel über Finanzen und Versicherungen'],
  ['de', 'Wir suchen Blogs zum Thema Garten und Pflanzen'],
  ['de', 'Sichtbarkeit für unseren Podcast erhöhen'],
  ['de', 'Reisen nach Italien für Familien'],
  ['de', 'Kochrezepte und Küche'],
  ['fr', 'Faire connaître notre application de voyage pour les familles'],
  ['fr', 'Des articles sur la cuisine française'],
  ['es', 'Promocionar nuestra nueva aplicación de viajes para familias'],
  ['es', 'Artículos sobre finanzas personales'],
  ['it', 'Promuovere la nostra nuova app di viaggi per famiglie'],
  ['nl', 'Onze nieuwe reisapp voor gezinnen promoten'],
  ['pt', 'Divulgar nosso aplicativo de viagens para famílias'],
  ['sv', 'Marknadsför vår nya reseapp för familjer'],
  ['en', 'best pizza in Rome'],
  ['en', 'Looking for guest posts on parenting blogs'],
  ['en', 'We sell handmade leather bags'],
  ['en', 'Get links for my plumbing business in Texas'],
  ['en', 'I need coverage for my mobile game launch'],
  ['de', 'Ich brauche Links für meinen Onlineshop'],
  ['de', 'Wir verkaufen handgemachte Ledertaschen'],
  ['de', 'Gastartikel auf Elternblogs gesucht'],
  ['de', 'Unsere App hilft beim Sparen'],
  ['en', 'The best travel blogs in Germany'],
  ['en', 'Marketing for a coffee shop in Vienna'],
  ['fr', 'Nous vendons des sacs en cuir faits main'],
  ['es', 'Vendemos bolsos de cuero hechos a mano'],
  ['it', 'Vendiamo borse in pelle fatte a mano'],];

// Keywords, names and fragments: no language can be told from them with confidence.
const ambiguous = [
  'travel news',
  'kiwi surfing',
  'travel',
  'hotels in Berlin',
  'SEO',
  'crypto',
  'Berlin Munich',
  'fintech saas b2b',
  'Launch',
  'voyage en famille',
  'Reisen',
  'golf',
  'tech news',
  'AI tools',
  'München',
  'yoga retreat',
  'fashion blog',
  'hotel Paris',
  'Berlin Munich Hamburg Cologne hotels',
  'SEO SaaS B2B marketing agency',
  'iPhone Android app marketing',
  'Paris Lyon Marseille restaurants',
  'crypto NFT blockchain DeFi',
  'Tesla BMW Audi car reviews',
  'yoga retreat Bali Thailand',
  'Google Ads PPC agency',
  'Hotel Adlon Kempinski Berlin',
  'online casino bonus',];

const words = (g: string) => (g.match(/\p{L}{2,}/gu) ?? []).length;

describe('the language of a goal', () => {
  it('is never a wrong one on goals written in a language, and is told for most of them', async () => {
    const detected = await Promise.all(labelled.map(([, goal]) => detectLanguage(goal)));
    const wrong = labelled.filter(([lang], i) => detected[i] !== undefined && detected[i] !== lang);
    expect(wrong).toEqual([]);
    const told = detected.filter((d) => d !== undefined).length;
    expect(told).toBeGreaterThanOrEqual(50); // 52 of 61 when measured
    // Short goals are never told, however clear they look.
    labelled.forEach(([, goal], i) => {
      if (words(goal) < MIN_WORDS_TO_DETECT) expect(detected[i], goal).toBeUndefined();
    });
  });

  it('is not forced onto keywords, names and fragments', async () => {
    const forced = [];
    for (const goal of ambiguous) {
      const lang = await detectLanguage(goal);
      if (lang) forced.push(`${goal} → ${lang}`);
    }
    // Lists of five names or more still read as a language to the detector.
    expect(forced).toEqual(['Berlin Munich Hamburg Cologne hotels → de', 'Tesla BMW Audi car reviews → en']);
  });

  it('names languages in English and knows ISO 639-1 codes', () => {
    expect(languageLabel('de')).toBe('German (de)');
    expect(languageLabel('pt')).toBe('Portuguese (pt)');
    expect(isLanguageCode('fr')).toBe(true);
    expect(isLanguageCode('zz')).toBe(false);
    expect(isLanguageCode('FR')).toBe(false);
    expect(isLanguageCode('fra')).toBe(false);
  });
});
