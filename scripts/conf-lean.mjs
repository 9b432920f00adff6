// An esbuild plugin for scripts/build.mjs. conf loads ajv and ajv-formats (its JSON-schema validation) at import
// time; kb never gives conf a schema (zod checks the config file), yet they are ~145 KB of the ~200 KB that every
// command with a saved profile would load to read it. Inside conf, they resolve to stubs that throw if ever used.
const UNUSED = {
  'ajv/dist/2020.js': 'export class Ajv2020 { constructor() { unused("ajv"); } }',
  'ajv-formats': 'export default { default: () => unused("ajv-formats") };',
};

const THROW = 'function unused(name) { throw new Error(`kb bundles conf without ${name}: its config file is checked with zod, not a schema`); }';

export const confLean = {
  name: 'conf-lean',
  setup(build) {
    build.onResolve({ filter: /^(ajv\/dist\/2020\.js|ajv-formats)$/ }, (args) =>
      /[\\/]node_modules[\\/]conf[\\/]/.test(args.importer) ? { path: args.path, namespace: 'conf-unused' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'conf-unused' }, (args) => ({ contents: `${THROW}\n${UNUSED[args.path]}`, loader: 'js' }));
  },
};
