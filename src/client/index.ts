export {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT_MS,
  KbClient,
  normalizeBaseUrl,
  type KbClientOptions,
} from './client.js';
export {
  ApiError,
  BaseListUnsupportedError,
  ClientOptionsError,
  exitCodeFor,
  exitCodeForStatus,
  KbClientError,
  MAY_HAVE_RUN_HELP,
  NetworkError,
  ResponseFormatError,
  ResponseTooLargeError,
  formatBytes,
  type ApiErrorDetails,
  type NetworkErrorKind,
} from './errors.js';
