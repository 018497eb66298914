// The S3 server a bench run talks to, whatever it is: s3rver or Swift started by the bench (on
// loopback, or in the emulated link's namespace behind the delaying relay), or a real S3 given
// with --endpoint. Peers only ever see this shape.

export interface Backend {
  /** "s3rver", "swift" or "endpoint". */
  readonly kind: string;
  /** What the peers connect to: the server itself, or the relay in front of it. */
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly region: string;
  readonly version?: string;
  /** How the network between peers and server was set up, for the report. */
  readonly network: string;
  stop(): Promise<void>;
}

/** Where a started server listens; the namespace prefix runs it inside the emulated link. */
export interface ServerPlacement {
  readonly host: string;
  readonly execPrefix: readonly string[];
  readonly dataDir: string;
}

export interface StartedServer {
  readonly kind: string;
  readonly port: number;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly region: string;
  readonly version?: string;
  stop(): Promise<void>;
}
