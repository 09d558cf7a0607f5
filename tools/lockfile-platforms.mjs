// @ts-check
// Adds package-lock.json entries for platform-specific optional packages this registry does not serve
// (chDB's macOS and arm64 builds): without one `npm ci` refuses the lockfile; with os/cpu, npm skips it
// elsewhere. Run after any `npm install` that changes the lockfile.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseJson } from './json.mjs';

/** @type {Record<string, { os: string[]; cpu: string[]; libc?: string[] }>} */
const PLATFORM_PACKAGES = {
  '@chdb/lib-darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  '@chdb/lib-darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  '@chdb/lib-linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
};

const lockPath = new URL('../package-lock.json', import.meta.url);
/** @typedef {{ version?: string; optionalDependencies?: Record<string, string> } & Record<string, unknown>} LockEntry */
const lock = /** @type {{ packages: Record<string, LockEntry> }} */ (
  parseJson(readFileSync(lockPath, 'utf8'))
);
let added = 0;
for (const entry of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const platform = PLATFORM_PACKAGES[name];
    const location = `node_modules/${name}`;
    if (!platform || lock.packages[location]) continue;
    lock.packages[location] = { version, license: 'Apache-2.0', optional: true, ...platform };
    added += 1;
  }
}
if (added > 0) {
  lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
}
console.log(`lockfile-platforms: ${added} entr${added === 1 ? 'y' : 'ies'} added`);
