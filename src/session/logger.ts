/** The logger the runtime writes to; no console output from library code unless the caller passes one. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

const noop = () => undefined;
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };
