/**
 * The error catalog: every failure the API answers has a stable code and one HTTP status.
 * The server raises these, the client maps statuses back to them, and the CLI derives its exit codes from them.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  expectation_failed: 417,
  idempotency_mismatch: 422,
  rate_limited: 429,
  internal: 500,
  bad_gateway: 502,
  unavailable: 503,
  gateway_timeout: 504,
  insufficient_storage: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class KbApiError extends Error {
  override readonly name = 'KbApiError';
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly help?: string,
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

export function codeForStatus(status: number): ErrorCode {
  for (const [code, known] of Object.entries(ERROR_STATUS)) {
    if (known === status) return code as ErrorCode;
  }
  return status >= 500 ? 'internal' : 'bad_request';
}
