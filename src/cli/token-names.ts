/** Token ids as `kb serve token list` shows them; anything else given to revoke is never echoed back (it may be a token). */
export const TOKEN_ID = /^tok_[0-9a-f]{12}$/;

/** Token names: never "-" (revoke's stdin), and checked so that a name is never a token id or a token (create.ts). */
export const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export const TOKEN_NAME_RULE = 'a name is 1 to 63 characters, A-Z, a-z, 0-9, dot, dash or underscore, starting with a letter or digit, and neither a token id (tok_ and 12 hex digits) nor a token';
