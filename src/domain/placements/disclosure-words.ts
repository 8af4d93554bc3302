/**
 * Words that label a page or a link as paid for, by the outlet's language (ISO 639-1). English
 * is looked for on every page: many outlets label in English whatever they write in.
 */
export const DISCLOSURE_WORDS: Readonly<Record<string, readonly string[]>> = {
  en: ['sponsored', 'advertisement', 'advertorial', 'paid post', 'partner content', 'promoted', 'ad'],
  de: ['Anzeige', 'Werbung', 'gesponsert', 'gesponserter Beitrag', 'bezahlte Partnerschaft'],
  fr: ['sponsorisé', 'sponsorisée', 'publicité', 'contenu sponsorisé', 'partenariat'],
  es: ['patrocinado', 'patrocinada', 'publicidad'],
  it: ['sponsorizzato', 'sponsorizzata', 'pubblicità'],
  nl: ['gesponsord', 'gesponsorde', 'advertentie'],
  pt: ['patrocinado', 'patrocinada', 'publicidade'],
  pl: ['sponsorowany', 'sponsorowana', 'sponsorowane', 'reklama'],
  sv: ['sponsrad', 'sponsrat', 'annons'],
};

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A whole word or phrase, any case, any run of white space between its words. */
const pattern = (word: string) => new RegExp(`(?<![\\p{L}\\p{N}])${word.split(' ').map(escape).join('\\s+')}(?![\\p{L}\\p{N}])`, 'iu');

/** The words looked for on a page in `language` (ISO 639-1; a region such as de-AT is ignored): its own first, then English. */
export function disclosureWords(language: string): string[] {
  const own = DISCLOSURE_WORDS[language.toLowerCase().split(/[-_]/)[0]!] ?? [];
  return [...new Set([...own, ...DISCLOSURE_WORDS.en!])];
}

/** The first disclosure word in `text` (as the page writes it), or null. */
export function findDisclosure(text: string, language: string): string | null {
  const normalised = text.normalize('NFC');
  for (const word of disclosureWords(language)) {
    const m = pattern(word.normalize('NFC')).exec(normalised);
    if (m) return m[0].replace(/\s+/g, ' ');
  }
  return null;
}
