// The parts of a Compose file that check-compose.mjs reads, in every syntax the Compose spec
// allows for them (a list or a map, short or long form): the checks normalise them.

export type ComposeScalar = string | number | boolean | null;

/** Long syntax of a published port; the short one is `[ip:][host:]container[/proto]`. */
export interface ComposePortMapping {
  host_ip?: string;
  published?: string | number;
  target: string | number;
}

export interface ComposeService {
  image?: string;
  build?: { context?: string; dockerfile?: string };
  command?: string | ComposeScalar[];
  environment?: Record<string, ComposeScalar | undefined> | string[];
  depends_on?: string[] | Record<string, { condition?: string } | null>;
  ports?: string | number | ComposePortMapping | (string | number | ComposePortMapping)[];
  user?: string | number;
  read_only?: boolean;
  privileged?: boolean;
  cap_add?: string | string[];
  cap_drop?: string | string[];
  security_opt?: string | string[];
  tmpfs?: string | string[];
  volumes?: (string | { target?: string })[];
  stop_grace_period?: string;
  healthcheck?: { test?: string | string[] };
  restart?: string;
}

export interface ComposeFile {
  name?: string;
  version?: string;
  services?: Record<string, ComposeService>;
}
