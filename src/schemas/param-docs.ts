import type { z } from 'zod';

/**
 * Query and path parameters arrive as strings and their zod schemas parse them (digits to a
 * number, "true" or "1" to a boolean), so zod alone documents them as patterned strings and a
 * generated client would type `per_page: 5` or `id: outlet.id` as errors. `documentAs` states the
 * JSON Schema of the value the parameter carries; http/plugins/openapi.ts writes it in place of
 * zod's. Validation is unchanged: the schema still parses the string.
 */
export const DOCUMENT_AS = 'x-document-as';

export interface ParamJsonSchema {
  type: 'integer' | 'number' | 'boolean';
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  default?: number | boolean;
}

export const documentAs = <T extends z.ZodType>(schema: T, json: ParamJsonSchema): T => schema.meta({ [DOCUMENT_AS]: json });

/** For a JSON Schema override: replaces what zod derived with the documented schema, keeping the description. */
export function applyDocumentAs(json: Record<string, unknown>): void {
  const documented = json[DOCUMENT_AS] as ParamJsonSchema | undefined;
  if (!documented) return;
  const description = json.description;
  for (const key of Object.keys(json)) delete json[key];
  Object.assign(json, documented, description === undefined ? {} : { description });
}
