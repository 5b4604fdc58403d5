/**
 * The Billing page's costs table names the unit each tool charges by: "Per record" as before when
 * every tool charging by the amount counts records, "Per page" when they all count pages, and the
 * unit in each cell when they differ.
 */
import { describe, expect, it } from 'vitest';
import { costsView } from '../../src/console/pages/billing.js';

const cost = (per_call: number, per_record: number, unit = 'records') => ({ per_call, per_record, unit });

describe("the Billing page's costs", () => {
  it('says per record, as before, when the tools count records', () => {
    const view = costsView({ get_account: cost(0, 0), people: cost(1, 2) });
    expect(view.perUnitHeading).toBe('Per record');
    expect(view.costsCaption).toBe('Tokens charged per call and per record returned');
    expect(view.costs).toEqual([
      { tool: 'get_account', perCall: 0, perUnit: '0' },
      { tool: 'people', perCall: 1, perUnit: '2' },
    ]);
  });

  it('says per page when the tools charging by the amount count pages', () => {
    const view = costsView({ get_account: cost(0, 0), fetch_pages: cost(0, 1, 'pages') });
    expect(view.perUnitHeading).toBe('Per page');
    expect(view.costsCaption).toBe('Tokens charged per call and per page returned');
    expect(view.costs.map((c) => c.perUnit)).toEqual(['1', '0']);
  });

  it('names the unit in each cell when the tools count different units', () => {
    const view = costsView({ people: cost(1, 2), fetch_pages: cost(0, 1, 'pages'), ping: cost(0, 0) });
    expect(view.perUnitHeading).toBe('Per unit counted');
    expect(view.costsCaption).toBe('Tokens charged per call and per page or record returned');
    expect(view.costs).toEqual([
      { tool: 'fetch_pages', perCall: 0, perUnit: '1 per page' },
      { tool: 'people', perCall: 1, perUnit: '2 per record' },
      { tool: 'ping', perCall: 0, perUnit: '0' },
    ]);
  });
});
