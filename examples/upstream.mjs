#!/usr/bin/env node
// An example upstream service for toolgate's tool catalogue (examples/catalogue.json).
//
// It exists so that a fresh clone can show a proxied, metered call end to end: toolgate does the
// keys, rate limits, fair use, tokens and the envelope; this stands in for an operator's own data
// service, the thing toolgate forwards to. It serves three fake tools, stores nothing and needs nothing
// but Node.js:
//
//   POST /search_people   {"title": "...", "limit": 10}   -> {"results": [people...], "status": "ok"}
//                          title "nobody"                  -> {"results": [], "status": "not_found"}
//   POST /company_lookup  {"domain": "acme.com"}          -> {"results": {company}, "status": "ok"}
//                          an unknown domain               -> HTTP 404
//   POST /fetch_pages     {"url": "...", "pages": 3}      -> {"results": [pages...], "status": "ok"}
//                          (examples/meters.json meters it in pages a day, a meter of the operator's own)
//
// PORT (default 9000) picks the port (0: a free one, printed at start). When EXAMPLE_UPSTREAM_TOKEN
// is set, every call must carry `Authorization: Bearer <EXAMPLE_UPSTREAM_TOKEN>` (the header the
// catalogue has toolgate send), or it is answered 401. Each call is logged on one line with the
// x-toolgate-* headers toolgate added. toolgate reads the variable only because its operator lists
// it: TOOLGATE_UPSTREAM_ENV=EXAMPLE_UPSTREAM_TOKEN, where the catalogue is imported and served.
//
//   EXAMPLE_UPSTREAM_TOKEN=dev-secret node examples/upstream.mjs
import { createServer } from 'node:http';

const PORT = Number(process.env.PORT ?? 9000);
const TOKEN = process.env.EXAMPLE_UPSTREAM_TOKEN;
const MAX_BODY = 64 * 1024;

const FIRST = ['Ada', 'Grace', 'Alan', 'Barbara', 'Edsger', 'Frances', 'Donald', 'Radia', 'Ken', 'Margaret'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Liskov', 'Dijkstra', 'Allen', 'Knuth', 'Perlman', 'Thompson'];
const COMPANIES = {
  'acme.com': { name: 'Acme Corporation', domain: 'acme.com', industry: 'Manufacturing', employees: 1200 },
  'globex.com': { name: 'Globex', domain: 'globex.com', industry: 'Energy', employees: 5400 },
  'initech.com': { name: 'Initech', domain: 'initech.com', industry: 'Software', employees: 310 },
};
const NAMES = Object.values(COMPANIES).map((c) => c.name);

/** Up to `limit` made-up people holding `title`: the same arguments always give the same people. */
function searchPeople({ title, limit = 10 }) {
  if (typeof title !== 'string' || title.trim() === '') {
    return [400, { message: 'title must be a non-empty string' }];
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    return [400, { message: 'limit must be an integer from 1 to 100' }];
  }
  if (title.trim().toLowerCase() === 'nobody') return [200, { results: [], status: 'not_found' }];
  const people = Array.from({ length: limit }, (_, i) => ({
    name: `${FIRST[i % FIRST.length]} ${LAST[(i + title.length) % LAST.length]}`,
    title,
    company: NAMES[i % NAMES.length],
  }));
  return [200, { results: people, status: 'ok', metadata: { source: 'example-upstream' } }];
}

/** The company behind a domain, or a 404 (toolgate answers the caller a 404 not_found, not an error). */
function companyLookup({ domain }) {
  if (typeof domain !== 'string' || domain === '') {
    return [400, { message: 'domain must be a non-empty string' }];
  }
  const company = COMPANIES[domain.toLowerCase().replace(/^www\./, '')];
  if (!company) return [404, { results: null, status: 'not_found', message: `no company at ${domain}` }];
  return [200, { results: company, status: 'ok', metadata: { source: 'example-upstream' } }];
}

/** Up to 20 made-up pages of a site, starting at `url`: one result per page fetched. */
function fetchPages({ url, pages = 1 }) {
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
    return [400, { message: 'url must be an http or https URL' }];
  }
  if (!Number.isInteger(pages) || pages < 1 || pages > 20) {
    return [400, { message: 'pages must be an integer from 1 to 20' }];
  }
  const results = Array.from({ length: pages }, (_, i) => ({
    url: i === 0 ? url : `${url.replace(/\/$/, '')}/page/${i + 1}`,
    title: `Page ${i + 1}`,
    words: 300 + ((url.length * (i + 7)) % 900),
  }));
  return [200, { results, status: 'ok', metadata: { source: 'example-upstream' } }];
}

const ROUTES = {
  '/search_people': searchPeople,
  '/company_lookup': companyLookup,
  '/fetch_pages': fetchPages,
};

function send(res, status, body) {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

/** The request's JSON object, or undefined when it is not one (or is too large). */
async function readJson(req) {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > MAX_BODY) return undefined;
  }
  try {
    const value = JSON.parse(text === '' ? '{}' : text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

const server = createServer(async (req, res) => {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  let status = 500;
  const reply = (code, body) => {
    status = code;
    send(res, code, body);
  };
  try {
    const route = ROUTES[path];
    if (!route) reply(404, { message: `no route ${path}` });
    else if (req.method !== 'POST') reply(405, { message: 'use POST' });
    else if (TOKEN !== undefined && req.headers.authorization !== `Bearer ${TOKEN}`) {
      reply(401, { message: 'bad or missing upstream token' });
    } else {
      const args = await readJson(req);
      reply(...(args ? route(args) : [400, { message: 'the body must be a JSON object' }]));
    }
  } catch (err) {
    console.error(err);
    reply(500, { message: 'example upstream failed' });
  } finally {
    const account = req.headers['x-toolgate-account'] ?? '-';
    const tool = req.headers['x-toolgate-tool'] ?? '-';
    console.log(
      `${new Date().toISOString()} ${req.method} ${path} ${status} account=${account} tool=${tool} ` +
        `request=${req.headers['x-request-id'] ?? '-'}`,
    );
  }
});

server.listen(PORT, '127.0.0.1', () => {
  const auth =
    TOKEN === undefined ? 'no token check' : 'checking Authorization: Bearer $EXAMPLE_UPSTREAM_TOKEN';
  // The port listened on, also when PORT=0 picked a free one.
  console.log(`example upstream on http://127.0.0.1:${server.address().port} (${auth})`);
});
