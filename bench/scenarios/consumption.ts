/**
 * @module Consumption over HTTP: the admin usage endpoint, the write path (one conditional
 * transaction per call) that a tool served elsewhere meters through.
 */
import { accountTotals, expectStatus } from '../lib/admin.js';
import { type Fixture, type Note, PEAK_RSS_MIB, type Scenario } from './scenario.js';

const BODY = JSON.stringify({ category: 'enrich', records: 1 });

/** The enrich requests in toolgate's 5 h windows, over every seeded account. */
async function enrichRequestsUsed(f: Fixture): Promise<number> {
  return (await accountTotals(f.toolgate.url, f.toolgate.adminToken, f.accounts, 'enrich')).requests;
}

/**
 * Each toolgate's count before a scenario's load: both scenarios here consume into the same
 * accounts' windows, one after the other, in a run of both.
 */
const usedBefore = new Map<Fixture['toolgate'], number>();

async function countBefore(f: Fixture): Promise<Fixture> {
  usedBefore.set(f.toolgate, await enrichRequestsUsed(f));
  return f;
}

export const consumption: Scenario = {
  id: 'consumption',
  title: 'consumption (HTTP)',
  description: `POST /admin/v1/accounts/{id}/usage ${BODY}, rotating over every seeded account`,
  rotates: 'account',
  prepare: countBefore,
  target: { sqlite: 0.8 },
  // Scale-out meters at no less than 0.60x of the embedded mode's pace in the same run.
  postgresTarget: 0.6,
  peakRssMib: PEAK_RSS_MIB,
  requests: (f) =>
    f.accounts.map((a) => ({
      method: 'POST',
      path: `/admin/v1/accounts/${a.id}/usage`,
      headers: { authorization: `Bearer ${f.toolgate.adminToken}`, 'content-type': 'application/json' },
      body: BODY,
    })),
  check(body, f) {
    const b = body as { account_id?: unknown; recorded?: { records?: unknown; requests?: unknown } } | null;
    if (b?.account_id !== f.accounts[0]?.id) return 'account_id is not the account of the request';
    if (b?.recorded?.records !== 1 || b.recorded.requests !== 1)
      return `recorded is ${JSON.stringify(b?.recorded)}, not {records: 1, requests: 1}`;
    return null;
  },
  /** Every accepted call is counted once: what toolgate's windows gained must add up to the 2xx answers. */
  async afterwards(f, totals) {
    const recorded = (await enrichRequestsUsed(f)) - (usedBefore.get(f.toolgate) ?? 0);
    const slack = totals.runs * totals.connections;
    const extra = recorded - totals.ok;
    const notes: Note[] = [];
    if (extra < 0) {
      notes.push({
        level: 'warning',
        text: `toolgate recorded ${recorded} consumptions but answered ${totals.ok} with 2xx: ${-extra} lost`,
      });
    } else if (extra > slack) {
      notes.push({
        level: 'warning',
        text: `toolgate recorded ${recorded} consumptions for ${totals.ok} 2xx answers: ${extra} more than the ${slack} that can be in flight when runs stop`,
      });
    } else {
      notes.push({
        level: 'info',
        text: `windows add up: toolgate recorded ${recorded} consumptions, the load generator counted ${totals.ok} 2xx (+${extra} answered after a run stopped; at most ${slack})`,
      });
    }
    return notes;
  },
};

/**
 * The same consumption with a webhook endpoint that wants every account's 80% and 100% crossings:
 * what watching for thresholds costs a consumption that crosses none (the seed plan's limits are
 * out of reach), against the plain scenario's ratio in the same run.
 */
export const consumptionAlerts: Scenario = {
  ...consumption,
  id: 'consumption_alerts',
  title: 'consumption, endpoint watching',
  description: `${consumption.description}, with a webhook endpoint wanting thresholds 80 and 100 of every account`,
  async prepare(f) {
    await expectStatus(201, f.toolgate.url, f.toolgate.adminToken, 'POST', '/admin/v1/webhooks', {
      // Nothing is ever sent: no consumption of the run crosses a threshold.
      url: 'http://127.0.0.1:9/toolgate-bench',
      events: ['fair_use.threshold'],
      thresholds: [80, 100],
    });
    return countBefore(f);
  },
};
