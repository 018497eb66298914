// What the filesystem layer needs of a logger: pino's child loggers satisfy it, tests pass a
// quiet one. Its own file so that the journal and the filesystem both import it without
// importing each other.

export interface FsLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info?(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}
