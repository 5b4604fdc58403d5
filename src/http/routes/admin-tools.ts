/**
 * @module The admin API's tool catalogue (`/admin/v1/tools`) and key verification for tools served
 * elsewhere (`/admin/v1/keys/verify`); registered inside adminRoutes, behind its token check.
 */
import Type from 'typebox';
import { unwrap } from '../../domain/api-error.js';
import type { Services } from '../../service/index.js';
import { type AdminApp, by, doc } from './admin-doc.js';

const Name = Type.Object({ name: Type.String({ maxLength: 100 }) });

export function adminToolRoutes(app: AdminApp, s: Services): void {
  app.get('/tools', { schema: doc('listTools', 'The tool catalogue, by name') }, async (_request) => ({
    data: await s.catalogue.list(),
  }));

  app.get(
    '/tools/:name',
    { schema: doc('showTool', 'Show a catalogue tool', { params: Name }) },
    async (request) => unwrap(await s.catalogue.get(request.params.name)),
  );

  app.put(
    '/tools/:name',
    {
      schema: doc('setTool', 'Create or replace a catalogue tool (refused whole, every problem listed)', {
        params: Name,
        // Checked by the catalogue's own rules, which list every problem with its member path.
        body: Type.Unknown(),
      }),
    },
    async (request, reply) => {
      const answer = unwrap(await s.catalogue.put(request.params.name, request.body, by(request)));
      return reply.code(answer.outcome === 'created' ? 201 : 200).send(answer);
    },
  );

  app.delete(
    '/tools/:name',
    { schema: doc('removeTool', 'Remove a catalogue tool', { params: Name }) },
    async (request) => unwrap(await s.catalogue.remove(request.params.name, by(request))),
  );

  app.post(
    '/keys/verify',
    {
      schema: doc('verifyKey', 'Verify an API key for a tool served elsewhere (200 either way)', {
        body: Type.Object({ key: Type.String({ maxLength: 200 }) }, { additionalProperties: false }),
      }),
    },
    async (request) => s.keys.verify(request.body.key),
  );
}
