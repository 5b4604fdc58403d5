/** The accounts, keys and ids the hostile properties run against (the `Secrets` of hostile-input.ts). */
import { ADMIN_TOKEN, accountWithKey, type Harness } from '../helpers.js';
import type { Secrets } from './hostile-input.js';

/** A caller, a victim (whose ids the admin calls use, and which they may close) and three spare accounts. */
export async function populate(h: Harness): Promise<Secrets> {
  const caller = await accountWithKey(h.services, { name: 'Caller', tokens: 100 });
  const victim = await accountWithKey(h.services, { name: 'Victim', tokens: 100 });
  const user = await h.services.users.add(victim.accountId, 'victim@example.com', 'owner');
  if (!user.ok) throw new Error(user.error.message);
  const spares = await Promise.all(
    [1, 2, 3].map((i) => accountWithKey(h.services, { name: `Spare ${i}`, tokens: 1_000 })),
  );
  return {
    key: caller.key,
    victimKey: victim.key,
    admin: ADMIN_TOKEN,
    accountId: victim.accountId,
    spareAccountIds: [spares[0]!.accountId, spares[1]!.accountId, spares[2]!.accountId],
    keyId: victim.keyId,
    userId: user.value.id,
  };
}
