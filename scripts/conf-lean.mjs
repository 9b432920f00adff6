// An esbuild plugin for scripts/build.mjs. conf loads ajv and ajv-formats (its JSON-schema validation) at import
// time; kb never gives conf a schema (zod checks the config file), yet they are ~145 KB of the ~200 KB that every
// command with a saved profile would load to read it. Inside conf, they resolve to stubs that throw if ever used.
export const CONF_UNUSED = {
  'ajv/dist/2020.js': 'export class Ajv2020 { constructor() { unused("ajv"); } }',
  'ajv-formats': 'export default { default: () => unused("ajv-formats") };',
};

const THROW = 'function unused(name) { throw new Error(`kb bundles conf without ${name}: its config file is checked with zod, not a schema`); }';

/** How often each stub was handed out, by module name: scripts/vendor.mjs fails the build when one never was. */
export const confLeanApplied = new Map();

export const confLean = {
  name: 'conf-lean',
  setup(build) {
    build.onResolve({ filter: /^(ajv\/dist\/2020\.js|ajv-formats)$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]conf[\\/]/.test(args.importer)) return undefined;
      confLeanApplied.set(args.path, (confLeanApplied.get(args.path) ?? 0) + 1);
      return { path: args.path, namespace: 'conf-unused' };
    });
    build.onLoad({ filter: /.*/, namespace: 'conf-unused' }, (args) => ({ contents: `${THROW}\n${CONF_UNUSED[args.path]}`, loader: 'js' }));
  },
};
