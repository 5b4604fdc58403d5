/**
 * @module Members (owners only): the account's users; invite by email (the user is added at once and
 * sent a sign-in link valid 7 days), change a role, remove (confirmed; their sessions end with their
 * last account, and the connectors they allowed in this one with them). The account always keeps an
 * owner: its only owner is offered neither, and a refusal says why on the page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UserRecord } from '../../service/users.js';
import {
  ACCOUNT_PARAMS,
  type AccountParams,
  accountGuard,
  accountOf,
  accountThingParams,
  type ConsolePageDeps,
  notFound,
  ownersOnlyPage,
  PageError,
  renderAccountPage,
} from '../context.js';

type UserParams = AccountParams & { userId: string };
const USER_PARAMS = accountThingParams('userId');

async function usersOf(deps: ConsolePageDeps, accountId: string): Promise<UserRecord[]> {
  const listed = await deps.uses.users.list(accountId);
  if (!listed.ok) throw notFound();
  return listed.value;
}

async function userOf(deps: ConsolePageDeps, accountId: string, userId: string) {
  const users = await usersOf(deps, accountId);
  const user = users.find((u) => u.id === userId);
  if (!user) throw notFound();
  return user;
}

/** A user as the Members page lists them: whether they are the one owner (nothing to change then). */
export type MemberRow = UserRecord & { soleOwner: boolean };

/** The users with, for each, whether they are the account's only owner. */
export function memberRows(users: UserRecord[]): MemberRow[] {
  const owners = users.filter((u) => u.role === 'owner').length;
  return users.map((u) => ({ ...u, soleOwner: u.role === 'owner' && owners === 1 }));
}

/**
 * A refused change, on the Members page with the reason (409: "An account keeps at least one
 * owner.", 400: a bad role). The rules are decided by the store inside the change's transaction,
 * never by a count read here first: two owners acting at once on two servers cannot both pass. A
 * not-found after the user was found means the actor is no owner any more (demoted a moment ago).
 */
async function refusedChange(
  deps: ConsolePageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  error: { code: string; message: string },
): Promise<FastifyReply> {
  const { who, membership } = accountOf(request);
  if (error.code === 'not_found') {
    const me = (await usersOf(deps, membership.accountId)).find((u) => u.email === who.email);
    throw me && me.role !== 'owner' ? ownersOnlyPage(membership.accountName) : notFound();
  }
  return membersView(deps, request, reply, { error: error.message }, error.code === 'conflict' ? 409 : 400);
}

async function membersView(
  deps: ConsolePageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  extra: Record<string, unknown> = {},
  status = 200,
): Promise<FastifyReply> {
  const { accountId } = accountOf(request).membership;
  const users = await usersOf(deps, accountId);
  return renderAccountPage(
    request,
    reply,
    'Members',
    'members',
    { users: memberRows(users), error: null, inviteError: null, invited: null, value: '', ...extra },
    status,
  );
}

export async function membersPage(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  const page = { schema: { hide: true, params: ACCOUNT_PARAMS } };
  const userPage = { schema: { hide: true, params: USER_PARAMS } };
  const log = deps.logger;

  app.get<{ Params: AccountParams; Querystring: { invited?: string } }>(
    '/a/:accountId/members',
    { ...page, preHandler: accountGuard(deps, true) },
    (request, reply) =>
      membersView(deps, request, reply, { invited: request.query.invited === '1' ? true : null }),
  );

  app.post<{ Params: AccountParams; Body: { email?: unknown; role?: unknown } }>(
    '/a/:accountId/members',
    { ...page, preHandler: accountGuard(deps, true) },
    async (request, reply) => {
      const { who, membership } = accountOf(request);
      const invited = await deps.service.invite(
        who.email,
        membership.accountId,
        request.body?.email,
        request.body?.role ?? 'member',
      );
      if (!invited.ok) {
        if (invited.error.code === 'not_found') return refusedChange(deps, request, reply, invited.error);
        const value = typeof request.body?.email === 'string' ? request.body.email : '';
        return membersView(deps, request, reply, { inviteError: invited.error.message, value }, 400);
      }
      deps.mailer
        .send(invited.value)
        .catch((err: unknown) => (log ?? request.log).error({ err }, 'console invitation not sent'));
      return reply.redirect(`/console/a/${membership.accountId}/members?invited=1`, 303);
    },
  );

  app.post<{ Params: UserParams; Body: { role?: unknown } }>(
    '/a/:accountId/members/:userId/role',
    { ...userPage, preHandler: accountGuard(deps, true) },
    async (request, reply) => {
      const { who, membership } = accountOf(request);
      const user = await userOf(deps, membership.accountId, request.params.userId);
      const changed = await deps.service.setRole(
        who.email,
        membership.accountId,
        user.id,
        request.body?.role,
      );
      if (!changed.ok) return refusedChange(deps, request, reply, changed.error);
      return reply.redirect(`/console/a/${membership.accountId}/members`, 303);
    },
  );

  app.get<{ Params: UserParams }>(
    '/a/:accountId/members/:userId/remove',
    { ...userPage, preHandler: accountGuard(deps, true) },
    async (request, reply) => {
      const { accountId } = accountOf(request).membership;
      const users = memberRows(await usersOf(deps, accountId));
      const user = users.find((u) => u.id === request.params.userId);
      if (!user) throw notFound();
      if (user.soleOwner)
        throw new PageError(
          409,
          `${user.email} is the only owner of this account, and an account keeps at least one owner: make someone else an owner first.`,
          'Not possible',
        );
      return renderAccountPage(request, reply, 'Members', 'member-remove', { user, title: 'Remove member' });
    },
  );

  app.post<{ Params: UserParams }>(
    '/a/:accountId/members/:userId/remove',
    { ...userPage, preHandler: accountGuard(deps, true) },
    async (request, reply) => {
      const { who, membership } = accountOf(request);
      const user = await userOf(deps, membership.accountId, request.params.userId);
      const removed = await deps.service.removeUser(who.email, membership.accountId, user.id);
      if (!removed.ok) return refusedChange(deps, request, reply, removed.error);
      const self = user.email === who.email;
      return reply.redirect(self ? '/console/' : `/console/a/${membership.accountId}/members`, 303);
    },
  );
}
