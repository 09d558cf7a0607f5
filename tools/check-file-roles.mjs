// @ts-check
// Fails when a source file under apps/*/src or libs/*/src is not `<name>.<role>.ts` with a role of
// FILE_ROLES, or when docs/code-map.md's "File roles" section lists other roles than FILE_ROLES.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What each holds: docs/code-map.md, "File roles". A new kind of file is a new role there and here. */
export const FILE_ROLES = [
  'app',
  'cache',
  'cli',
  'client',
  'config',
  'constants',
  'consumer',
  'controller',
  'decorator',
  'destination',
  'dto',
  'entity',
  'error',
  'errors',
  'filter',
  'guard',
  'handler',
  'interceptor',
  'launcher',
  'listener',
  'mapper',
  'marker',
  'metrics',
  'middleware',
  'module',
  'patch',
  'pipe',
  'presenter',
  'process',
  'protocol',
  'publisher',
  'repository',
  'server',
  'service',
  'setup',
  'state',
  'store',
  'types',
  'util',
  'validator',
  'worker',
];

/** Tests are named after what they test, barrels and entry points after their place in the tree. */
const EXEMPT_FILE = /(?:\.(?:[a-z0-9]+-)?spec\.ts|\.d\.ts)$|^(?:index|main)\.ts$/;

/**
 * @param {string} file
 * @returns {string | undefined}
 */
export function fileRole(file) {
  const parts = path.basename(file, '.ts').split('.');
  return parts.length > 1 ? parts[parts.length - 1] : undefined;
}

/**
 * Relative to `root`, sorted.
 * @param {string} root
 * @returns {string[]}
 */
export function roleSourceFiles(root) {
  /** @type {string[]} */
  const files = [];
  /** @param {string} dir */
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'migrations') walk(full);
      } else if (entry.name.endsWith('.ts') && !EXEMPT_FILE.test(entry.name)) {
        files.push(path.relative(root, full));
      }
    }
  };
  for (const group of ['apps', 'libs']) {
    for (const project of readdirSync(path.join(root, group))) {
      const src = path.join(root, group, project, 'src');
      if (existsSync(src)) walk(src);
    }
  }
  return files.sort();
}

/**
 * The roles listed as "- `role`: …" under "## File roles".
 * @param {string} markdown
 * @returns {string[]}
 */
export function documentedRoles(markdown) {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('File roles\n'));
  if (!section) return [];
  return [...section.matchAll(/^- `([a-z]+)`/gm)].map((match) => match[1]);
}

/** @param {string} root */
export function checkFileRoles(root) {
  const roles = new Set(FILE_ROLES);
  const files = roleSourceFiles(root);
  /** @type {string[]} */
  const problems = [];
  for (const file of files) {
    const role = fileRole(file);
    if (role === undefined) problems.push(`${file}: no role, name it <name>.<role>.ts`);
    else if (!roles.has(role)) problems.push(`${file}: .${role} is not a file role`);
  }
  const documented = documentedRoles(readFileSync(path.join(root, 'docs/code-map.md'), 'utf8'));
  const missing = FILE_ROLES.filter((role) => !documented.includes(role));
  const extra = documented.filter((role) => !roles.has(role));
  if (missing.length > 0)
    problems.push(`docs/code-map.md: File roles does not describe ${missing.join(', ')}`);
  if (extra.length > 0)
    problems.push(`docs/code-map.md: File roles lists ${extra.join(', ')}, not in FILE_ROLES`);
  return { files: files.length, problems };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { files, problems } = checkFileRoles(repoRoot);
  if (files === 0) problems.push('no source file found under apps/*/src or libs/*/src');
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(`file roles (tools/check-file-roles.mjs): ${FILE_ROLES.join(', ')}`);
    process.exit(1);
  }
  console.log(`${files} source files, each <name>.<role>.ts with one of ${FILE_ROLES.length} roles`);
}
