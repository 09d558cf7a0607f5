#!/usr/bin/env node
// @ts-check
// Compiles the services to JavaScript in dist/ for the image: tsc, not a bundler, because NestJS's
// injection reads the constructor types only `emitDecoratorMetadata` records. The `@hogbase/*`
// aliases become packages under dist/node_modules, so Node resolves them the ordinary way.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');

rmSync(dist, { recursive: true, force: true });
const tsc = spawnSync(
  process.execPath,
  [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')],
  { stdio: 'inherit' },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

// Read beside the code at run time.
cpSync(path.join(root, 'libs/clickhouse/migrations'), path.join(dist, 'libs/clickhouse/migrations'), {
  recursive: true,
});
cpSync(path.join(root, 'docker/entrypoint.js'), path.join(dist, 'hogbase.js'));

/**
 * Not imported: the image build copies this file alone.
 * @param {string} file
 * @returns {unknown}
 */
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

const baseConfig = /** @type {{ compilerOptions: { paths: Record<string, string[]> } }} */ (
  readJson(path.join(root, 'tsconfig.base.json'))
);
const { paths } = baseConfig.compilerOptions;
const packages = [];
for (const [alias, [source]] of Object.entries(paths)) {
  // Test helpers (`…/testing`, test-support) are not compiled into the image.
  if (alias.endsWith('/testing') || alias === '@hogbase/test-support') continue;
  const compiled = path.join(dist, source.replace(/\.ts$/, '.js'));
  const packageDir = path.join(dist, 'node_modules', alias);
  mkdirSync(packageDir, { recursive: true });
  const main = path.relative(packageDir, compiled).split(path.sep).join('/');
  writeFileSync(
    path.join(packageDir, 'package.json'),
    `${JSON.stringify({ name: alias, private: true, main }, null, 2)}\n`,
  );
  packages.push(alias);
}
console.log(`dist/: ${packages.length} libs compiled and linked (${packages.join(', ')})`);
