/**
 * @module The Overview's Notifications section: an owner's own choice to get the alert mails of this
 * account (a fair-use window at 80% and 100%, the balance low or out), turned off or on again with
 * one button. Members are told the mails go to the owners; only owners may post the form.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { userActor } from '../../service/console.js';
import {
  ACCOUNT_PARAMS,
  type AccountParams,
  accountGuard,
  accountOf,
  accountPath,
  type ConsolePageDeps,
  notFound,
  PageError,
} from '../context.js';

/** Where the alert mails send people to turn them off: the Overview's section. */
export const ALERTS_ANCHOR = 'alerts';

/** The section's data for the Overview (template `alerts-section`). */
export async function alertsSection(
  deps: ConsolePageDeps,
  request: FastifyRequest,
): Promise<{ alerts: { owner: boolean; on: boolean; saved: boolean } }> {
  const { membership, owner } = accountOf(request);
  const saved = (request.query as { alerts?: unknown } | undefined)?.alerts === 'saved';
  if (!owner) return { alerts: { owner, on: false, saved: false } };
  const on = await deps.uses.alerts.mailsOn(membership.accountId, membership.userId);
  if (!on.ok) throw notFound();
  return { alerts: { owner, on: on.value, saved } };
}

export async function alertsPage(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  app.post<{ Params: AccountParams; Body: { alert_mails?: unknown } }>(
    '/a/:accountId/alerts',
    { schema: { hide: true, params: ACCOUNT_PARAMS }, preHandler: accountGuard(deps, true) },
    async (request, reply) => {
      const { who, membership } = accountOf(request);
      const choice = request.body?.alert_mails;
      if (choice !== 'on' && choice !== 'off')
        throw new PageError(400, 'Choose whether to get the alert emails: on or off.');
      const set = await deps.uses.alerts.setMailsOn(
        membership.accountId,
        membership.userId,
        choice === 'on',
        userActor(who.email),
      );
      if (!set.ok) throw notFound();
      return reply.redirect(`${accountPath(membership.accountId)}?alerts=saved#${ALERTS_ANCHOR}`, 303);
    },
  );
}
