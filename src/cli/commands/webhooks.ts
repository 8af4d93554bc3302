import { z } from 'zod';
import { eventTypes } from '../../domain/events/event-types.js';
import type { EventOwner, EventType } from '../../domain/events/event-types.js';
import {
  addEndpoint,
  deleteEndpoint,
  endpointOwner,
  listEndpoints,
  rotateSecret,
} from '../../domain/webhooks/endpoints.js';
import { webhookSecretBox } from '../../domain/webhooks/secret-box.js';
import { CliError, id, listOf, readFlags, str } from '../args.js';
import { outboundPolicyFor } from '../../domain/orders/configured-checker.js';
import type { Commands } from '../registry.js';

const ownerFlags = { workspace: id.optional(), publisher: id.optional() };

function ownerOf(f: { workspace?: number | undefined; publisher?: number | undefined }): EventOwner {
  if ((f.workspace === undefined) === (f.publisher === undefined)) throw new CliError('give exactly one of --workspace or --publisher');
  return f.workspace !== undefined ? { party: 'buyer', workspaceId: f.workspace } : { party: 'publisher', publisherId: f.publisher! };
}

const eventType = z.enum(eventTypes, { error: `must be one of ${eventTypes.join(', ')}` });

export const webhookCommands: Commands = {
  'webhook create': async ({ pool, config }, raw) => {
    const f = readFlags(z.object({ ...ownerFlags, url: str.max(2000), event: listOf(eventType, eventTypes.length).optional() }).strict(), raw);
    const owner = ownerOf(f);
    const input = { url: f.url, ...(f.event ? { events: f.event as EventType[] } : {}) };
    return addEndpoint(pool, owner, input, outboundPolicyFor(config), Date.now(), webhookSecretBox(pool, config.SECRETS_KEY));
  },

  'webhook list': async ({ pool }, raw) => {
    const f = readFlags(z.object(ownerFlags).strict(), raw);
    return { data: await listEndpoints(pool, ownerOf(f)) };
  },

  'webhook delete': async ({ pool }, raw) => {
    const f = readFlags(z.object({ id }).strict(), raw);
    await deleteEndpoint(pool, await endpointOwner(pool, f.id), f.id);
    return { deleted: f.id };
  },

  'webhook rotate-secret': async ({ pool, config }, raw) => {
    const f = readFlags(z.object({ id }).strict(), raw);
    return rotateSecret(pool, await endpointOwner(pool, f.id), f.id, Date.now(), webhookSecretBox(pool, config.SECRETS_KEY));
  },
};
