// Architecture rules, checked by `npm test` (npm run check:deps). The folders of src/ form layers: a
// folder imports only folders of lower layers (never a sibling of its own layer, never one above),
// so no folder reaches back to itself. Change a rule in the same commit as the code, saying why.
/** Lowest first. One line is one layer; folders on one line do not import each other. */
const LAYERS = [
  ['kernel'], // errors, ids, clock, json, logger, access rules: no I/O beyond the logger
  ['metrics', 'tracing'], // series counted where work happens (prom-client); OpenTelemetry's tracer, its start and span helpers
  ['outbound'], // the destination policy and the one guarded fetch
  ['config'], // the only reader of process.env and svc.yaml
  ['db'], // pool, migrations, the embedded server
  ['eventstore'], // append, read, follow, wake-ups
  ['projections'], // read models of the log: registry, inline runner, rebuild
  ['project', 'http', 'contract'], // project documents; HTTP plumbing; the HTTP contract's shapes
  ['privacy'], // personal data: envelopes (AES-256-GCM), per-subject data keys, blind indexes, erasure
  ['iam'], // users, roles, tokens, sign-in, the Authenticator
  ['audit'], // tamper evidence: hash chain verification, signed checkpoints
  ['federation', 'versions'], // OAuth sign-in; version administration of definitions
  ['models'],
  ['artifacts'],
  ['agents'], // LLM and MCP clients, guardrails, AgentModels
  ['workflows'], // the workflow language: definitions, validation, templates, manifests
  ['runs'], // a run's data path: trigger -> engine -> journal -> projection -> routes (SSE)
  ['approvals', 'schedules'], // human decisions on runs; schedules that start runs
  ['grpc', 'mcp', 'openapi', 'dev', 'console'], // other surfaces over runs and definitions (console: serves the web app's files)
  ['app'], // the composition root: the only place that knows every feature
  ['main.ts'],
  ['cli'],
];

const folderPattern = (name) => (name.endsWith('.ts') ? `^src/${name.replace('.', '\\.')}$` : `^src/${name}/`);

const layerRules = LAYERS.flatMap((layer, index) =>
  layer.flatMap((folder) => {
    const notBelow = LAYERS.slice(index)
      .flat()
      .filter((other) => other !== folder);
    if (notBelow.length === 0) return [];
    return {
      name: `layer-${folder.replace('.ts', '')}`,
      comment: `src/${folder} imports only the layers below it`,
      severity: 'error',
      from: { path: folderPattern(folder) },
      to: { path: notBelow.map(folderPattern) },
    };
  }),
);

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'no import cycles, at any depth', from: {}, to: { circular: true } },
    ...layerRules,
    {
      name: 'client-imports-no-server-code',
      comment: 'the client library ships alone: it imports the HTTP contract and nothing else of the server',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: ['^src/client/', '^src/contract/'] },
    },
    {
      name: 'console-app-imports-only-the-client',
      comment: 'the web app (console/) talks to svc through the public client library only, never server code',
      severity: 'error',
      from: { path: '^console/' },
      to: { path: '^(src|test|bench|scripts)/', pathNot: '^src/client/' },
    },
    {
      name: 'no-other-feature-routes',
      comment: "a feature never imports another feature's HTTP routes; only the composition root mounts them",
      severity: 'error',
      from: { path: '^src/([^/]+)/', pathNot: ['^src/app/', '^src/main\\.ts$', '^src/cli/'] },
      to: { path: '^src/.+[Rr]outes?[.]ts$', pathNot: '^src/$1/' },
    },
    {
      name: 'no-test-code-in-src',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^src/contract/gen/' },
  },
};
