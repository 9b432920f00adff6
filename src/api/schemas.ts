import { DESCRIPTION_RULE, descriptionLengthOk, KEY_PATTERN, KEY_RULE, validUnicode } from './limits.js';
import * as z from './zod.js';

export * from './limits.js';

export const Key = z.string({ error: `must be a string: ${KEY_RULE}` }).check(z.regex(KEY_PATTERN, { error: KEY_RULE }));

export const Description = z.string({ error: `must be a string or null: ${DESCRIPTION_RULE}` }).check(
  z.refine(descriptionLengthOk, { error: DESCRIPTION_RULE }),
  z.refine(validUnicode, { error: 'a description must be valid Unicode text (no unpaired surrogates)' }),
);

export const Namespace = z.strictObject({
  key: Key,
  description: z.nullable(Description),
});
export type Namespace = z.infer<typeof Namespace>;

export const Base = z.strictObject({
  namespace: Key,
  key: Key,
  description: z.nullable(Description),
});
export type Base = z.infer<typeof Base>;

/** `description` in an update: a string sets it, null clears it, absent leaves it as it is. */
const DescriptionPatch = z.strictObject({
  description: z.optional(z.nullable(Description)),
});

export const NsCreateBody = z.strictObject({
  key: z.optional(z.nullable(Key)),
  description: z.optional(z.nullable(Description)),
});
export type NsCreateBody = z.infer<typeof NsCreateBody>;

export const NsUpdateBody = z.strictObject({
  namespace: Key,
  data: DescriptionPatch,
});
export type NsUpdateBody = z.infer<typeof NsUpdateBody>;

/** ns_delete (an extension): a namespace that holds bases is deleted, with them, only when `cascade` is true. */
export const NsDeleteBody = z.strictObject({
  namespace: Key,
  cascade: z.optional(z.boolean({ error: 'must be true or false' })),
});
export type NsDeleteBody = z.infer<typeof NsDeleteBody>;

export const BaseCreateBody = z.strictObject({
  namespace: Key,
  key: z.optional(z.nullable(Key)),
  description: z.optional(z.nullable(Description)),
});
export type BaseCreateBody = z.infer<typeof BaseCreateBody>;

export const BaseUpdateBody = z.strictObject({
  namespace: Key,
  base: Key,
  data: DescriptionPatch,
});
export type BaseUpdateBody = z.infer<typeof BaseUpdateBody>;

export const BaseDeleteBody = z.strictObject({
  namespace: Key,
  base: Key,
});
export type BaseDeleteBody = z.infer<typeof BaseDeleteBody>;

export const BaseListQuery = z.strictObject({
  namespace: Key,
});
export type BaseListQuery = z.infer<typeof BaseListQuery>;

export const EmptyQuery = z.strictObject({});

export const FailureEnvelope = z.object({
  success: z.literal(false),
  message: z.string(),
  help: z.optional(z.nullable(z.string())),
});
export type FailureEnvelope = z.infer<typeof FailureEnvelope>;

export function successEnvelope<T extends z.ZodMiniType>(data: T) {
  return z.object({ success: z.literal(true), data });
}

/** Organization names follow the key rules, so they are safe in any output. */
export const OrgName = Key;
