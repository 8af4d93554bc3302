import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { TestApp } from './app.js';

// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * Validators for schemas of the app's own OpenAPI document (3.1, so JSON Schema 2020-12), with Ajv
 * as a third-party receiver would use it. `schemaAt(pointer)` compiles the schema at a JSON pointer
 * into the document, e.g. `/webhooks/event/post/requestBody/content/application~1json/schema`, and
 * answers a function that lists a value's errors ([] when valid). Compiling takes a while and
 * blocks the process: do it before the test, not while a receiver in this process is being sent to.
 */
export async function openApiSchemas(app: TestApp): Promise<(at: string) => (value: unknown) => string[]> {
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  const doc = { ...(res.json() as object), $id: 'https://openapi.invalid/openapi.json' };
  // strict: false lets Ajv pass over OpenAPI's own keywords (example, discriminator's mapping, …).
  const ajv = new Ajv2020({ strict: false, allErrors: true, discriminator: true });
  addFormats(ajv);
  ajv.addSchema(doc);
  return (at) => {
    const validate = ajv.getSchema(`${doc.$id}#${at}`);
    if (!validate) throw new Error(`no schema at ${at}`);
    return (value) => (validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`));
  };
}
