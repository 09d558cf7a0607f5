// @ts-check
// Fails when docs/code-map.md names a missing file, or a symbol its file does not declare.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Table rows `| … | \`file\` | \`symbol\` |`, and inline `\`file\` (\`Symbol\`)` pairs.
 * @param {string} markdown
 * @returns {{ file: string, symbol: string | undefined, line: number }[]}
 */
export function codeMapEntries(markdown) {
  /** @type {{ file: string, symbol: string | undefined, line: number }[]} */
  const entries = [];
  markdown.split('\n').forEach((text, index) => {
    const pairs = text.matchAll(
      /`((?:apps|libs|tools|bench|faults)\/[^`<>]+\.(?:ts|mjs|md))`(?:\s*\|\s*`([\w.]+)`|\s*\(`([\w.]+)`\))?/g,
    );
    for (const match of pairs)
      entries.push({ file: match[1], symbol: match[2] ?? match[3], line: index + 1 });
  });
  return entries;
}

/**
 * @param {string} source
 * @param {string} symbol
 */
export function declares(source, symbol) {
  const name = symbol.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `(?:^|\\n)\\s*(?:export\\s+)?(?:default\\s+)?(?:declare\\s+)?(?:abstract\\s+)?(?:async\\s+)?` +
      `(?:function\\*?|class|interface|type|enum|const|let)\\s+${name}\\b`,
  ).test(source);
}

/** @param {string} mapFile */
export function checkCodeMap(mapFile) {
  const entries = codeMapEntries(readFileSync(mapFile, 'utf8'));
  /** @type {string[]} */
  const problems = [];
  for (const { file, symbol, line } of entries) {
    const absolute = path.join(repoRoot, file);
    if (!existsSync(absolute)) {
      problems.push(`${path.relative(repoRoot, mapFile)}:${line}: ${file} does not exist`);
      continue;
    }
    if (symbol && !declares(readFileSync(absolute, 'utf8'), symbol)) {
      problems.push(`${path.relative(repoRoot, mapFile)}:${line}: ${file} declares no ${symbol}`);
    }
  }
  return { entries: entries.length, problems };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { entries, problems } = checkCodeMap(path.join(repoRoot, 'docs/code-map.md'));
  if (entries === 0) problems.push('docs/code-map.md names no file');
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) process.exit(1);
  console.log(`docs/code-map.md: ${entries} files and symbols, all present`);
}
