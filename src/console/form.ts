import { invalidInput } from '../domain/errors.js';

/** A posted form (urlencoded, or a JSON object): names to values, as the body parsers give them. */
export type Form = Record<string, unknown>;

/** A field sent twice, or as something other than text: refused (`formText`), never read as empty. */
export const NOT_SENT_ONCE = 'must be sent once, as text';

/**
 * A form field's text, '' when it was not sent. A field sent twice (an array) or as something
 * other than text (a JSON body's number) is refused naming it, not read as empty: an empty limit
 * means "no limit", and a setting must not be lifted by a malformed form.
 */
export function formText(form: Form, name: string): string {
  const value = form[name];
  if (value === undefined) return '';
  if (typeof value !== 'string') throw invalidInput({ [name]: [NOT_SENT_ONCE] }, `The field "${name}" must be sent once, as text.`);
  return value;
}
