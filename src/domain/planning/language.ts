// The language a plan keeps to when the caller names none: the goal's, when it can be told.

/** A goal with fewer words (of two letters or more) than this is not given a language. */
export const MIN_WORDS_TO_DETECT = 5;

type Detector = { detect: (text: string) => { language: string; isReliable: () => boolean } };

// Loaded on the first plan that needs it, not at import: the n-gram table costs about 30 MB of
// heap and a second to load, which processes that never plan (CLI, most tests) should not pay.
let detector: Promise<Detector> | undefined;
const loadDetector = () => (detector ??= import('eld/extrasmall').then((m) => m.eld));

/**
 * Whether a goal has too few words to tell its language: on fewer than MIN_WORDS_TO_DETECT
 * (keywords, names, "travel news") the detector names a language as readily for "hotels in
 * Berlin" (German) or "best pizza in Rome" (Italian) as for real sentences.
 */
export function tooShortToTell(goal: string): boolean {
  return (goal.match(/\p{L}{2,}/gu) ?? []).length < MIN_WORDS_TO_DETECT;
}

/**
 * The ISO 639-1 code of the goal's language, or undefined when it cannot be told with confidence:
 * the goal is not too short, and the detector (eld) calls its answer reliable.
 */
export async function detectLanguage(goal: string): Promise<string | undefined> {
  if (tooShortToTell(goal)) return undefined;
  const result = (await loadDetector()).detect(goal);
  return /^[a-z]{2}$/.test(result.language) && result.isReliable() ? result.language : undefined;
}

const names = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/** Two lower-case letters that name a language (ISO 639-1, as the runtime's ICU data knows them). */
export function isLanguageCode(code: string): boolean {
  return /^[a-z]{2}$/.test(code) && names.of(code) !== undefined;
}

/** "German (de)"; a code without an English name is shown as it is. */
export function languageLabel(code: string): string {
  const name = /^[a-z]{2}$/.test(code) ? names.of(code) : undefined;
  return name ? `${name} (${code})` : code;
}
