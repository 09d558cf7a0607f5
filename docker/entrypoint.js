'use strict';
// The image's entry point (dist/hogbase.js): the first argument chooses what this container runs.
// The chosen main is loaded into this process, so Node is PID 1 and the service's own SIGTERM
// handler drains it; no shell or init process stands in between.
const path = require('node:path');

const SERVICES = {
  management: 'apps/management/src/main.js',
  capture: 'apps/capture/src/main.js',
  ingestion: 'apps/ingestion/src/main.js',
  workers: 'apps/workers/src/main.js',
  standalone: 'apps/standalone/src/main.js',
};
const ADMIN = 'apps/management/src/cli/admin.cli.js';

const USAGE = `Usage: <image> <command> [options]

Commands:
  management | capture | ingestion | workers   one service (split mode), configured by the environment
  standalone                                   every service in one process (as npm start)
  migrate [--only <steps>] | migrate --wait    the deployment's migration step, or wait for it
  admin <bootstrap|create-key|revoke-key|accept-invite> [options]
                                               the operator's commands (admin help)`;

const [command] = process.argv.slice(2);
if (command in SERVICES) {
  // argv stays as it is: capture's cluster workers (CAPTURE_WORKERS) re-run this same command line.
  require(path.join(__dirname, SERVICES[command]));
} else if (command === 'migrate') {
  // admin.cli reads `migrate [options]` from argv as it is.
  require(path.join(__dirname, ADMIN));
} else if (command === 'admin') {
  process.argv.splice(2, 1);
  require(path.join(__dirname, ADMIN));
} else {
  process.stderr.write(`${command ? `unknown command ${command}\n\n` : ''}${USAGE}\n`);
  process.exitCode = command === undefined || command === 'help' || command === '--help' ? 0 : 64;
}
