export {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT_MS,
  KbClient,
  type KbClientOptions,
} from './client.js';
export { normalizeBaseUrl } from './base-url.js';
export {
  ApiError,
  BaseListUnsupportedError,
  ClientOptionsError,
  exitCodeFor,
  exitCodeForStatus,
  KbClientError,
  MAY_HAVE_RUN_HELP,
  NetworkError,
  NsDeleteUnsupportedError,
  ResponseFormatError,
  ResponseTooLargeError,
  formatBytes,
  type ApiErrorDetails,
  type NetworkErrorKind,
} from './errors.js';
