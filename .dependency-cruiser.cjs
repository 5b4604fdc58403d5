/**
 * The house's floors, lowest first: a file may import from its own floor or any floor below it,
 * never from one above (npm run lint:arch; test/architecture.test.ts runs it). The migrations and
 * their index are the one circle allowed: the index lists the files, each file names its type.
 */
const FLOORS = [
  ['domain', '^src/domain/'],
  [
    'settings and probes',
    '^src/(brand-logo|config|config-warnings|key-secret|logger|tick-shape)\\.ts$|^src/(metrics|client)/',
  ],
  ['store', '^src/store/'],
  ['outbound', '^src/(webhooks|upstream|payments)/'],
  ['service', '^src/service/'],
  ['tools', '^src/tools/'],
  ['http door', '^src/http/'],
  ['mcp door', '^src/mcp/'],
  ['console door', '^src/console/'],
  ['oauth door', '^src/oauth/'],
  ['app', '^src/app\\.ts$'],
  ['composition root', '^src/(server|first-run|customer-alerts)\\.ts$'],
  ['entry points', '^src/main\\.ts$|^src/cli/'],
];

const upward = FLOORS.flatMap(([name, path], i) =>
  FLOORS.slice(i + 1).map(([above, abovePath]) => ({
    name: `${name} imports ${above}`,
    comment: `${name} stands below ${above}: it may not import it (the arrow would run back up).`,
    severity: 'error',
    from: { path },
    to: { path: abovePath },
  })),
);

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'no-circular',
      comment: 'No circle of files, but the migrations and their index.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/store/migrations/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unplaced',
      comment: 'Every file of src/ stands on a floor.',
      severity: 'error',
      from: { path: '^src/', pathNot: FLOORS.map(([, p]) => `(${p})`).join('|') },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
