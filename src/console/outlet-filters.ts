import type { FieldErrors } from '../domain/errors.js';
import { outletListQuery } from '../schemas/outlets.js';

// The console's outlet search form, built from the query schema of GET /api/v1/outlets
// (`outletListQuery`): one field per parameter but the paging, the choices of its enumerations
// taken from the schema, and the query string parsed by that same schema. A parameter added to
// the schema fails the type check here until the form has a field for it.

const shape = outletListQuery.shape;

type FilterName = Exclude<keyof typeof shape, 'page' | 'per_page'>;

/** The query's names in the order the form shows them. */
export const FILTER_NAMES = ['q', 'country', 'language', 'topic', 'type', 'format', 'max_price_usd', 'min_traffic', 'verified_traffic', 'sort'] as const satisfies readonly FilterName[];

interface FieldSpec {
  label: string;
  hint?: string;
  /** A text field's input type and width; a choice's options (value, words) with "any" first. */
  input?: { type: 'search' | 'text'; maxlength: number; size?: number; inputmode?: 'decimal' | 'numeric' };
  options?: Array<{ value: string; label: string }>;
}

const words = (value: string) => value.replace(/_/g, ' ');
const choices = (any: string, values: readonly string[], label: (v: string) => string = words) => [{ value: '', label: any }, ...values.map((v) => ({ value: v, label: label(v) }))];

const SORT_WORDS: Record<string, string> = {
  relevance: 'Best match',
  traffic: 'Least traffic first',
  '-traffic': 'Most traffic first',
  price: 'Cheapest first',
  '-price': 'Most expensive first',
  link_survival: 'Best link survival',
  verification: 'Best verification rate',
};

const SPECS: Record<FilterName, FieldSpec> = {
  q: { label: 'Search outlets', hint: 'Words of the name, domain, topics or description.', input: { type: 'search', maxlength: 200 } },
  country: { label: 'Country', hint: 'Two letters, e.g. US, DE.', input: { type: 'text', maxlength: 2, size: 4 } },
  language: { label: 'Language', hint: 'Two letters, e.g. en, de.', input: { type: 'text', maxlength: 2, size: 4 } },
  topic: { label: 'Topic', hint: 'e.g. travel, finance.', input: { type: 'text', maxlength: 40, size: 12 } },
  type: { label: 'Kind', options: choices('Any kind', shape.type.unwrap().options) },
  format: { label: 'Format', options: choices('Any format', shape.format.unwrap().options) },
  max_price_usd: { label: 'Price at most (USD)', hint: 'Fees included.', input: { type: 'text', maxlength: 12, size: 8, inputmode: 'decimal' } },
  min_traffic: { label: 'Monthly visits at least', input: { type: 'text', maxlength: 12, size: 10, inputmode: 'numeric' } },
  verified_traffic: {
    label: 'Traffic',
    options: [
      { value: '', label: 'Verified or not' },
      { value: 'true', label: 'Google-verified only' },
      { value: 'false', label: 'Not verified only' },
    ],
  },
  sort: { label: 'Sort', hint: 'Default: best match, or most traffic without words.', options: choices('Default', shape.sort.unwrap().options, (v) => SORT_WORDS[v] ?? words(v)) },
};

export type FilterValues = Partial<Record<FilterName, string>>;

/**
 * The search's parameters as the query string gives them: only the form's names (a page's URL
 * may carry others), a blank field being a filter not given, as an API client leaves it out.
 * Anything but a single text is kept as is, for the schema to refuse naming it.
 */
export function filterValuesOf(query: unknown): { values: FilterValues; given: Record<string, unknown> } {
  const q = (query ?? {}) as Record<string, unknown>;
  const values: FilterValues = {};
  const given: Record<string, unknown> = {};
  for (const name of [...FILTER_NAMES, 'page'] as const) {
    const v = q[name];
    if (v === undefined || (typeof v === 'string' && v.trim() === '')) continue;
    given[name] = v;
    if (typeof v === 'string' && name !== 'page') values[name] = v;
  }
  return { values, given };
}

/** The form's fields with what was typed and what is wrong with it. */
export function filterFields(values: FilterValues, errors: FieldErrors) {
  return FILTER_NAMES.map((name) => {
    const spec = SPECS[name];
    const value = values[name] ?? '';
    return {
      name,
      ...spec,
      value,
      errors: errors[name] ?? [],
      ...(spec.options ? { options: spec.options.map((o) => ({ ...o, selected: o.value === value })) } : {}),
    };
  });
}

/** Whether any filter other than the words is set: the page says so, and offers to clear them. */
export const anyFilter = (values: FilterValues) => FILTER_NAMES.some((n) => n !== 'q' && values[n] !== undefined);
