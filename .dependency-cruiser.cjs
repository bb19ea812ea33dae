/**
 * The layers of src/ (docs/ARCHITECTURE.md, "Layers"): common/ is the ground floor, with
 * config/ beside it, providers/ stands on it, context/ (the request context and the records
 * it carries) on providers/, modules/ on all of them, gateway/ (the request path) on top;
 * the dashboard apart.
 * `npm run lint:deps` checks them in CI.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle (type-only imports count): move the shared types into a file both sides import.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'common-is-the-ground-floor',
      severity: 'error',
      comment: 'common/ holds helpers that import nothing of the gateway; pass what it needs in, or move the type down.',
      from: { path: '^src/common/' },
      to: { path: '^src/(modules|providers|context|gateway|database)/' },
    },
    {
      name: 'config-beside-the-ground-floor',
      severity: 'error',
      comment: 'config/ reads and checks the environment at start: it stands on common/ only (a check it needs lives in config/ or common/).',
      from: { path: '^src/config/' },
      to: { path: '^src/(modules|providers|context|gateway|database)/' },
    },
    {
      name: 'dashboard-apart',
      severity: 'error',
      comment: 'The dashboard is a browser app that speaks to the gateway over its HTTP API only; the gateway never imports it.',
      from: { path: '^dashboard/' },
      to: { path: '^src/' },
    },
    {
      name: 'gateway-ignores-the-dashboard',
      severity: 'error',
      comment: 'The gateway serves the dashboard as built files, never imports its code.',
      from: { path: '^src/' },
      to: { path: '^dashboard/' },
    },
    {
      name: 'providers-import-no-module',
      severity: 'error',
      comment: 'Adapters know their provider, not the gateway around them (they read a ProviderTarget, not a RouteTarget).',
      from: { path: '^src/providers/' },
      to: { path: '^src/(modules|context|gateway)/' },
    },
    {
      name: 'context-imports-no-module',
      severity: 'error',
      comment:
        'The request context and its records sit below the modules that fill them in: a record the context carries lives in context/ (its behaviour stays in the module).',
      from: { path: '^src/context/' },
      to: { path: '^src/(modules|gateway|database)/' },
    },
    {
      name: 'modules-below-the-request-path',
      severity: 'error',
      comment: 'Modules receive the request context (context/); gateway/ (middleware, key guard, filter) calls them, never the reverse.',
      from: { path: '^src/(modules|database)/' },
      to: { path: '^src/gateway/' },
    },
    {
      name: 'no-spec-imports',
      severity: 'error',
      comment: 'Production code never imports a test file.',
      from: { pathNot: '\\.spec\\.ts$' },
      to: { path: '\\.spec\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a circle through types is still a circle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
