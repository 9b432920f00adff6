import { EXIT } from '../client/exit-codes.js';

/** An error the CLI reports itself: a message, an optional hint, and the exit code of docs/contract.md, Exit codes. */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number,
    readonly help?: string,
    /** The X-Request-Id of the reply the error is about, when it is about one. */
    readonly requestId?: string,
  ) {
    super(message);
  }
}

/** Bad arguments or flags, invalid input caught locally, or a prompt that cannot be shown: exit 2. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  constructor(message: string, help?: string) {
    super(message, EXIT.usage, help);
  }
}
