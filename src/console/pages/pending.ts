import type { FastifyInstance } from 'fastify';
import { page } from '../context.js';

/** Settings sections whose pages are not built yet: the nav links them, and they say where the same settings are today. */
export async function pendingPages(app: FastifyInstance) {
  const sections = [
    { path: 'webhooks', heading: 'Webhooks' },
  ];
  for (const s of sections) {
    app.get(`/settings/${s.path}`, async (request, reply) => page(request, reply, 'pending', { title: s.heading, heading: s.heading, section: s.path }));
  }
}
