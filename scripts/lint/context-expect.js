/**
 * ESLint rule kb/context-expect: tests that run concurrently count their assertions on the test context's `expect`.
 *
 * Vitest keeps one assertion count on the global `expect`, reset as each test starts and checked (requireAssertions)
 * as it ends. With tests running at once, a test that awaits after its last assertion is checked against a count a
 * neighbour has just reset ("expected any number of assertion, but got none"), and a test that asserts nothing passes
 * on a neighbour's count. A test that takes `expect` from its context gets a count of its own. So, in a file that runs
 * any test concurrently (`describe.concurrent`, `it.concurrent`, `test.concurrent`, `{ concurrent: true }`):
 * - every test running concurrently takes `expect` from its context: `async ({ expect }) => ...`, or the second
 *   parameter of `it.for` (`it.each` gives no context, so it is refused there);
 * - the global `expect` (vitest's import, or a global) is used nowhere in the file but in hooks (beforeAll and the
 *   like: what they assert is no test's count), so a helper of the file that asserts takes the test's `expect` as a
 *   parameter.
 * Helpers outside test files (test/helpers) never import the global `expect` at all: eslint.config.js refuses it.
 */

const TEST = new Set(['it', 'test']);
const SUITE = new Set(['describe', 'suite']);

/** `it.concurrent.skipIf(x)` as { base: 'it', names: ['concurrent', 'skipIf'] }; undefined for any other callee. */
function chain(callee) {
  const names = [];
  let node = callee;
  for (;;) {
    if (node.type === 'Identifier') return { base: node.name, names: names.reverse() };
    if (node.type === 'MemberExpression' && !node.computed && node.property.type === 'Identifier') {
      names.push(node.property.name);
      node = node.object;
    } else if (node.type === 'CallExpression') {
      node = node.callee; // it.for(cases)(name, fn), it.skipIf(cond)(name, fn), describe.each(table)(name, fn)
    } else {
      return undefined;
    }
  }
}

const HOOKS = new Set(['beforeAll', 'afterAll', 'beforeEach', 'afterEach']);

const isFunction = (node) => node.type === 'ArrowFunctionExpression' || node.type === 'FunctionExpression';

/** 'concurrent', 'sequential' or undefined: what a test or suite call says of its own mode. */
function mode(names, args) {
  if (names.includes('concurrent')) return 'concurrent';
  if (names.includes('sequential')) return 'sequential';
  for (const arg of args) {
    if (arg.type !== 'ObjectExpression') continue;
    for (const property of arg.properties) {
      if (property.type !== 'Property' || property.key.type !== 'Identifier' || property.value.type !== 'Literal') continue;
      if (property.key.name === 'concurrent' && property.value.value === true) return 'concurrent';
      if (property.key.name === 'sequential' && property.value.value === true) return 'sequential';
    }
  }
  return undefined;
}

/** Whether a function's parameter destructures `expect`: `({ expect })`, `({ expect, task })`. */
function takesExpect(param) {
  return param?.type === 'ObjectPattern' && param.properties.some((p) => p.type === 'Property' && !p.computed && p.key.type === 'Identifier' && p.key.name === 'expect');
}

/** Whether a node is inside the callback of a hook: `beforeAll(async () => { ... })`. */
function inHook(node) {
  for (let at = node.parent; at; at = at.parent) {
    if (isFunction(at) && at.parent?.type === 'CallExpression' && at.parent.arguments.includes(at) && at.parent.callee.type === 'Identifier' && HOOKS.has(at.parent.callee.name)) return true;
  }
  return false;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'Tests that run concurrently take the test context\'s expect, and their file never uses the global expect.' },
    schema: [],
    messages: {
      noContextExpect: 'This test runs concurrently: take expect from its context ({{how}}), so its assertions are counted as its own, not on the global expect its neighbours reset.',
      eachInConcurrent: 'This test runs concurrently, and {{name}}.each gives it no context to take expect from: use {{name}}.for(cases)(name, (case, { expect }) => ...).',
      globalExpect: 'This file runs tests concurrently: use the test context\'s expect ({ expect }), passed to helpers, not the global one, whose assertion count the tests running at once share (hooks may use it).',
    },
  },
  create(context) {
    const sourceCode = context.sourceCode;
    /** The mode of each suite callback met so far, innermost last. */
    const suites = [];
    let concurrentFile = false;

    function checkTest(node, call, fn) {
      concurrentFile = true;
      if (call.names.includes('each')) {
        context.report({ node: node.callee, messageId: 'eachInConcurrent', data: { name: call.base } });
        return;
      }
      const index = call.names.includes('for') ? 1 : 0;
      if (!takesExpect(fn.params[index])) {
        context.report({ node: fn.params[index] ?? fn, messageId: 'noContextExpect', data: { how: index === 1 ? '(case, { expect }) => ...' : '({ expect }) => ...' } });
      }
    }

    return {
      CallExpression(node) {
        const call = chain(node.callee);
        if (!call || !(TEST.has(call.base) || SUITE.has(call.base))) return;
        const fn = node.arguments.findLast(isFunction);
        if (!fn) return;
        const own = mode(call.names, node.arguments);
        if (SUITE.has(call.base)) {
          const inherited = suites.findLast((entry) => entry.mode !== undefined)?.mode;
          suites.push({ fn, mode: own ?? inherited });
          if ((own ?? inherited) === 'concurrent') concurrentFile = true;
          return;
        }
        const inherited = suites.findLast((entry) => entry.mode !== undefined)?.mode;
        if ((own ?? inherited) === 'concurrent') checkTest(node, call, fn);
      },
      ':function:exit'(node) {
        if (suites.at(-1)?.fn === node) suites.pop();
      },
      'Program:exit'(program) {
        if (!concurrentFile) return;
        const globalScope = sourceCode.getScope(program);
        const moduleScope = globalScope.childScopes.find((scope) => scope.type === 'module') ?? globalScope;
        const references = globalScope.through.filter((reference) => reference.identifier.name === 'expect');
        const imported = moduleScope.set.get('expect');
        const fromVitest = imported?.defs.some((def) => def.type === 'ImportBinding' && def.parent.type === 'ImportDeclaration' && def.parent.source.value === 'vitest');
        if (fromVitest) references.push(...imported.references);
        for (const reference of references.filter((r) => !inHook(r.identifier))) context.report({ node: reference.identifier, messageId: 'globalExpect' });
      },
    };
  },
};
