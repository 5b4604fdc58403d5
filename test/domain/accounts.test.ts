import { describe, expect, it } from 'vitest';
import {
  type Account,
  isUnlimited,
  statusRefusal,
  validateAccountName,
  validateStatusChange,
  visibleBalance,
} from '../../src/domain/accounts.js';
import { DEFAULT_PLANS, type Plan } from '../../src/domain/plans.js';

const plan = (id: string): Plan => {
  const p = DEFAULT_PLANS.find((x) => x.id === id);
  if (!p) throw new Error(`no plan ${id}`);
  return p;
};

const account = (override: boolean | null, tokenBalance = 40): Account => ({
  id: 'acc_x',
  name: 'Acme',
  planId: 'free',
  status: 'active',
  unlimitedOverride: override,
  tokenBalance,
  createdAt: 0,
  updatedAt: 0,
  planSince: 0,
  lowBalance: null,
});

describe('an account is unlimited', () => {
  it('when its plan is, unless the account itself says otherwise', () => {
    expect(isUnlimited(account(null), plan('free'))).toBe(false);
    expect(isUnlimited(account(null), plan('subscription_97'))).toBe(true);
    expect(isUnlimited(account(true), plan('free'))).toBe(true);
    expect(isUnlimited(account(false), plan('subscription_97'))).toBe(false);
  });

  it('and then shows a balance of -1; otherwise its stored balance', () => {
    expect(visibleBalance(account(null, 40), plan('subscription_97'))).toBe(-1);
    expect(visibleBalance(account(true, 40), plan('free'))).toBe(-1);
    expect(visibleBalance(account(null, 40), plan('free'))).toBe(40);
    expect(visibleBalance(account(false, 0), plan('subscription_97'))).toBe(0);
  });
});

describe('validateStatusChange', () => {
  it('moves between active and suspended, and to closed', () => {
    expect(validateStatusChange('active', 'suspended')).toEqual({ ok: true, value: 'suspended' });
    expect(validateStatusChange('suspended', 'active')).toEqual({ ok: true, value: 'active' });
    expect(validateStatusChange('active', 'closed')).toEqual({ ok: true, value: 'closed' });
    expect(validateStatusChange('closed', 'closed')).toEqual({ ok: true, value: 'closed' });
  });

  it('never reopens a closed account', () => {
    for (const to of ['active', 'suspended']) {
      const result = validateStatusChange('closed', to);
      expect(!result.ok && result.error.code).toBe('conflict');
    }
  });

  it('refuses an unknown status', () => {
    const result = validateStatusChange('active', 'deleted');
    expect(!result.ok && result.error.code).toBe('invalid_arguments');
  });
});

describe('statusRefusal', () => {
  it('refuses metered tools to suspended and closed accounts, and lets active ones through', () => {
    expect(statusRefusal('active')).toBeUndefined();
    expect(statusRefusal('suspended')).toMatchObject({ ok: false, error: { code: 'account_suspended' } });
    expect(statusRefusal('closed')).toMatchObject({ ok: false, error: { code: 'account_closed' } });
  });
});

describe('validateAccountName', () => {
  it('trims the name and accepts 1-200 characters', () => {
    expect(validateAccountName('  Acme  ')).toEqual({ ok: true, value: 'Acme' });
    expect(validateAccountName('x'.repeat(200)).ok).toBe(true);
  });

  it('refuses a blank, overlong or non-string name', () => {
    for (const name of ['', '   ', 'x'.repeat(201), 42, null, undefined]) {
      const result = validateAccountName(name);
      expect(!result.ok && result.error.code).toBe('invalid_arguments');
    }
  });
});
