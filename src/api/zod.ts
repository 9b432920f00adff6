// zod/mini is the zod 4 core with a functional API that bundles only what is used: tens of KB where `zod`
// (classic) is ~450 KB and ~25 ms of every command's start-up. Classic sets the English messages itself; mini
// sets none ("Invalid input" for everything), so they are set here, from the English locale alone (not the
// index of all of them). Every module of src imports zod from this file, so the locale is set before any parse.
//
// Import it as a namespace, `import * as z from '…/api/zod.js'`: esbuild then keeps only the members used.
// (`import { z } from 'zod/mini'` would keep them all: that `z` is a namespace object re-exported as a value.)
// eslint-disable-next-line no-restricted-imports -- the one place that imports zod/mini
import { config } from 'zod/mini';
// eslint-disable-next-line no-restricted-imports -- the one locale kb speaks
import en from 'zod/v4/locales/en.js';

config(en());

// eslint-disable-next-line no-restricted-imports -- see above
export * from 'zod/mini';
