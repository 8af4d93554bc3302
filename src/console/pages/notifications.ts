import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type FieldErrors } from '../../domain/errors.js';
import { modeLabels, notificationKinds, notificationModes } from '../../domain/notifications/kinds.js';
import { describeUnsubscribe, notificationSettings, setNotificationSettings, unsubscribe } from '../../domain/notifications/preferences.js';
import { type ConsoleDeps, page, targetOf } from '../context.js';
import type { Views } from '../view-models.js';
import { type Form, formText } from '../form.js';

// Settings → Notifications (docs/mail.md): the signed-in person's own settings in this workspace
// or publisher account, per kind "Right away", "Daily digest" or "Off"; every role has the page
// (a viewer may ask to hear of orders). And the one-click unsubscribe link of every notification
// mail, which works without signing in: its page (GET) only asks, since mail scanners open links;
// a POST, the page's button or a mail client's RFC 8058 request, turns the kind off.

export async function notificationPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  /** `chosen`: the modes a refused form sent, shown again instead of the stored ones. */
  const settingsPage = async (request: FastifyRequest, reply: FastifyReply, { chosen = {}, ...data }: Partial<Views['notifications']> & { chosen?: Record<string, string> } = {}) => {
    const target = targetOf(request);
    const me = request.consoleUser!;
    const settings = await notificationSettings(deps.pool, me.id, { kind: target.kind, id: target.id });
    return page(request, reply, 'notifications', {
      title: 'Notifications',
      section: 'notifications',
      action: `${target.href}/settings/notifications`,
      email: me.email,
      verified: me.emailVerified,
      digestHour: String(deps.config.NOTIFICATION_DIGEST_HOUR).padStart(2, '0'),
      modes: notificationModes.map((m) => ({ value: m, label: modeLabels[m] })),
      kinds: settings.map((s) => ({ ...s, mode: chosen[s.kind] ?? s.mode, defaultLabel: modeLabels[s.defaultMode] })),
      ...data,
    });
  };

  app.get('/settings/notifications', async (request, reply) => settingsPage(request, reply));

  app.post('/settings/notifications', async (request, reply) => {
    const target = targetOf(request);
    const form = (request.body ?? {}) as Form;
    // Each kind the form names: the domain refuses one this person does not receive here, or a mode that is none of the three.
    const changes: Record<string, string> = {};
    const errors: FieldErrors = {};
    for (const kind of notificationKinds) {
      if (form[kind] === undefined) continue;
      try {
        changes[kind] = formText(form, kind);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        Object.assign(errors, err.details.errors);
      }
    }
    try {
      if (Object.keys(errors).length) throw new DomainError('invalid_input', 'The given data was invalid.', { errors });
      await setNotificationSettings(deps.pool, request.consoleUser!.id, { kind: target.kind, id: target.id }, changes);
    } catch (err) {
      if (!(err instanceof DomainError) || err.code !== 'invalid_input') throw err;
      reply.code(422);
      return settingsPage(request, reply, {
        errors: (err.details.errors ?? {}) as FieldErrors,
        problem: 'Nothing was changed: check the notifications named below.',
        chosen: changes,
      });
    }
    return settingsPage(request, reply, { notice: 'Notifications saved.' });
  });
}

const tokenOf = (request: FastifyRequest) => {
  const t = (request.query as { token?: unknown } | undefined)?.token;
  return typeof t === 'string' && t.length <= 200 ? t : '';
};

/**
 * The unsubscribe link's page, outside the signed-in gate and without the form token: the link's
 * signed token is what authorises it, and a mail client posting it (RFC 8058) has no session.
 */
export async function unsubscribePages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  // RFC 8058 lets the one-click POST come as multipart/form-data: its body says nothing the URL
  // does not, so it is read (bounded) and dropped.
  app.addContentTypeParser('multipart/form-data', { parseAs: 'string', bodyLimit: 4096 }, (_request, _body, done) => done(null, {}));

  const answer = (reply: FastifyReply, request: FastifyRequest, data: Partial<Views['unsubscribe']>) => {
    // The page carries its link's token: no cache keeps it, and no Referer takes it elsewhere.
    reply.header('cache-control', 'no-store');
    return page(request, reply, 'unsubscribe', { title: 'Unsubscribe', ...data });
  };

  app.get('/unsubscribe', async (request, reply) => {
    const token = tokenOf(request);
    const subject = await describeUnsubscribe(deps.pool, token);
    return answer(reply, request, { subject, action: `/app/unsubscribe?token=${encodeURIComponent(token)}` });
  });

  app.post('/unsubscribe', { config: { formToken: false } }, async (request, reply) => {
    const subject = await unsubscribe(deps.pool, tokenOf(request));
    return answer(reply, request, { subject, done: true });
  });
}
