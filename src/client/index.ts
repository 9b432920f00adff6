export { DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS, KbClient, type KbClientOptions } from './client.js';
export {
  ApiError,
  BaseListUnsupportedError,
  ClientOptionsError,
  exitCodeFor,
  exitCodeForStatus,
  KbClientError,
  NetworkError,
  ResponseFormatError,
  type ApiErrorDetails,
  type NetworkErrorKind,
} from './errors.js';
