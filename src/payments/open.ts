/** @module Payments as configured: Stripe's library loaded only when TOOLGATE_STRIPE_SECRET_KEY is set. */
import type { PaymentsConfig } from '../config.js';
import type { Clock } from '../domain/clock.js';
import type { UnpaidPolicy } from '../domain/payments.js';
import type { PaymentProvider } from './provider.js';

export async function openPayments(
  config: PaymentsConfig | undefined,
  clock: Clock,
): Promise<{ provider: PaymentProvider; fallbackPlan: string; unpaid: UnpaidPolicy } | undefined> {
  if (!config) return undefined;
  // Some megabytes of library a server without payments never loads.
  const { StripeGateway } = await import('./stripe-gateway.js');
  return {
    provider: new StripeGateway(
      { secretKey: config.secretKey, webhookSecret: config.webhookSecret, apiUrl: config.apiUrl },
      clock,
    ),
    fallbackPlan: config.fallbackPlan,
    unpaid: config.unpaid,
  };
}
