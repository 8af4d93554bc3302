import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { forbidden } from '../domain/errors.js';
import { refuseUnstorableText } from '../domain/text-input.js';
import type { WorkspacePrincipal } from '../domain/keys/principal.js';
import { paginationMeta } from '../schemas/pagination.js';
import type { Confirmations } from './confirmation.js';
import { invalidArguments, toolError } from './errors.js';
import type { Services } from '../domain/services/services.js';

/** Everything a tool may use: the caller (from its key) and the app's shared services. */
export interface ToolContext extends Pick<Services, 'pool' | 'search' | 'clock' | 'durations' | 'placementGroups' | 'workspaces' | 'approvalBaseUrl'> {
  principal: WorkspacePrincipal;
  confirmations: Confirmations;
  log: FastifyBaseLogger;
  requestId: string;
}

/** All four hints, always set: the SDK's defaults (destructive, open world) would be wrong here. */
type Annotations = Required<Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>>;

export const annotations = {
  /** Reads this service's own data. */
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  /** Moves an order forward; a repeat is refused (409) because the order has moved on. */
  step: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  /** Adds something each time it is called. */
  append: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  /** Ends or pays for something; with a confirmation token a repeat replays instead of acting. */
  destructive: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
} as const satisfies Record<string, Annotations>;

type AnyObject = z.ZodObject<z.ZodRawShape>;

export interface ToolDef<I extends AnyObject = AnyObject, O extends AnyObject = AnyObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: Annotations;
  /** Needs a key created with "Can place orders"; checked before the arguments (403 before 422). */
  spending?: boolean;
  run(ctx: ToolContext, args: z.output<I>): Promise<z.input<O>>;
}

export const defineTool = <I extends AnyObject, O extends AnyObject>(def: ToolDef<I, O>): ToolDef => def as unknown as ToolDef;

/** A database id argument (`outlet_id`, `order_id`). */
export const idArg = (what: string) =>
  z
    .number({ error: 'must be an integer id' })
    .int('must be an integer id')
    .min(1, 'must be a positive integer id')
    .max(2_147_483_647, 'must be a positive integer id')
    .describe(what);

export const pageArgs = {
  page: z
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(1_000_000, 'must be at most 1000000')
    .default(1)
    .describe('1-based page number (default 1).'),
  per_page: z
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(100, 'must be at most 100')
    .default(15)
    .describe('Items per page, 1..100 (default 15).'),
};

/** The REST paginator's `meta` without its URLs: an agent asks for another page with `page`. */
export const pageMetaSchema = paginationMeta.omit({ links: true, path: true });

export function pageMeta(page: number, perPage: number, total: number, count: number): z.infer<typeof pageMetaSchema> {
  const from = count > 0 ? (page - 1) * perPage + 1 : null;
  return {
    current_page: page,
    from,
    last_page: Math.max(1, Math.ceil(total / perPage)),
    per_page: perPage,
    to: from === null ? null : from + count - 1,
    total,
  };
}

// zod bounds every integer to the safe-integer range; said on hundreds of fields, that is noise
// in the schemas an agent reads (tools/list is part of its context), so it is left out.
const dropSafeIntegerBounds = ({ jsonSchema: s }: { jsonSchema: Record<string, unknown> }) => {
  if (s.minimum === Number.MIN_SAFE_INTEGER) delete s.minimum;
  if (s.maximum === Number.MAX_SAFE_INTEGER) delete s.maximum;
};

/**
 * zod writes a nullable field as `type: ["string", "null"]`. Several agent platforms accept only a
 * subset of JSON Schema for tools, without `type` arrays, so each one becomes an `anyOf` of single
 * types (the same meaning in every draft); other keywords stay beside it.
 */
export function withoutTypeArrays(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutTypeArrays);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = withoutTypeArrays(value);
  if (Array.isArray(out.type)) {
    const types = out.type as unknown[];
    delete out.type;
    const anyOf = types.map((type) => ({ type }));
    if (types.length === 1) out.type = types[0];
    else if (out.anyOf === undefined) out.anyOf = anyOf;
    else out.allOf = [...((out.allOf as unknown[] | undefined) ?? []), { anyOf }];
  }
  return out;
}

/**
 * zod's global registry as tool schemas read it: the shared schemas named for /openapi.json (an
 * `id`) stay inline, since a tool schema is read on its own, with no components to refer to.
 */
class MetadataWithoutIds extends z.core.$ZodRegistry<z.core.GlobalMeta> {
  override get(schema: z.core.$ZodType): z.core.GlobalMeta | undefined {
    const meta = z.globalRegistry.get(schema);
    if (meta?.id === undefined) return meta;
    const { id: _id, ...rest } = meta;
    return rest;
  }
}
const toolMetadata = new MetadataWithoutIds();

/** The tools/list entry, computed once per process (converting zod to JSON Schema is not free). */
export function describeTool(def: ToolDef): Tool {
  // draft-07, as the SDK's McpServer emits, so every client's validator reads it.
  const json = (schema: AnyObject, io: 'input' | 'output') =>
    withoutTypeArrays(z.toJSONSchema(schema, { target: 'draft-7', io, metadata: toolMetadata, override: dropSafeIntegerBounds }));
  return {
    name: def.name,
    title: def.title,
    description: def.description,
    inputSchema: json(def.input, 'input') as Tool['inputSchema'],
    outputSchema: json(def.output, 'output') as Tool['outputSchema'],
    annotations: { title: def.title, ...def.annotations },
  };
}

/**
 * Runs one tools/call once the SDK has validated its arguments against the tool's input schema
 * (`args` is what that schema parsed, defaults filled in): the spending check, the tool, then the
 * result as structuredContent plus its JSON as text. Every failure becomes a tool error in
 * The buyer API's terms (errors.ts); nothing thrown reaches the SDK.
 */
export async function callTool(def: ToolDef, context: () => Promise<ToolContext>, caller: ErrorContext, args: unknown): Promise<CallToolResult> {
  try {
    refuseToSpend(def, caller.principal);
    refuseUnstorableText(args, 'arguments');
    const structured = (await def.run(await context(), args as z.output<AnyObject>)) as Record<string, unknown>;
    // `replyJson` (tool-call.ts) writes this result by hand, reusing the text as structuredContent.
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  } catch (err) {
    return toolError(err, caller, def.name);
  }
}

type ErrorContext = Pick<ToolContext, 'principal' | 'log' | 'requestId'>;

function refuseToSpend(def: ToolDef, principal: WorkspacePrincipal): void {
  if (def.spending && !principal.canPlaceOrders) {
    throw forbidden(`This key cannot spend, so ${def.name} is refused before any quote. Use an API key created with "Can place orders".`);
  }
}

/**
 * A tools/call the SDK refused before the tool ran, in the words every other tool error uses.
 * The SDK answers its refusals as a tool error whose text is its own sentence (arguments that
 * fail the input schema); the sentence names no field as invalid_input does, so the arguments are
 * checked again here, in the order `callTool` checks them: a key that cannot spend is told so
 * before anything about its arguments.
 */
export function sdkRefusal(def: ToolDef, caller: ErrorContext, args: unknown, sdkText: string): CallToolResult {
  try {
    refuseToSpend(def, caller.principal);
    refuseUnstorableText(args, 'arguments');
    const parsed = def.input.safeParse(args ?? {});
    if (!parsed.success) throw invalidArguments(parsed.error);
    // Arguments the schema accepts: the SDK refused something else, which is not the caller's to fix.
    throw new Error(`The SDK refused a ${def.name} call: ${sdkText}`);
  } catch (err) {
    return toolError(err, caller, def.name);
  }
}
