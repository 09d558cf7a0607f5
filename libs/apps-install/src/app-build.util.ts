import { build, formatMessages, type Loader, type Message, type Plugin } from 'esbuild';
import type { AppFiles, BuiltApp, BuiltFile, PluginJson } from './app-install.types';

/** Everything else must be in the app. */
export const RUNTIME_MODULES: readonly string[] = [
  '@posthog/plugin-scaffold',
  'node-fetch',
  'crypto',
  'url',
  'zlib',
  'buffer',
];

const NAMESPACE = 'hogbase-app';
const RESOLVABLE_EXTENSIONS = ['.ts', '.tsx', '.js', '.jsx', '.mjs', '.cjs', '.json'];
const LOADERS: Record<string, Loader> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.tsx': 'tsx',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.jsx': 'jsx',
  '.json': 'json',
};

type BareImports = 'runtime-modules' | 'none' | 'all';

/** Null when the path climbs above the app's root. */
function normalize(path: string): string | null {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length === 0) return null;
      segments.pop();
    } else {
      segments.push(segment);
    }
  }
  return segments.join('/');
}

function extensionOf(path: string): string {
  const match = /\.[^./]+$/.exec(path);
  return match ? match[0] : '';
}

/** Node-style: exact, with an extension, then `index.*`. */
function resolveAppFile(files: AppFiles, importer: string, specifier: string): string | null {
  const directory = importer.includes('/') ? importer.slice(0, importer.lastIndexOf('/')) : '';
  const base = normalize(`${directory}/${specifier}`);
  if (base === null) return null;
  const candidates = [base, ...RESOLVABLE_EXTENSIONS.map((extension) => `${base}${extension}`)];
  // TypeScript sources import their siblings as `./x.js`.
  if (/\.[cm]?js$/.test(base)) candidates.push(base.replace(/js$/, 'ts'), base.replace(/\.[cm]?js$/, '.tsx'));
  candidates.push(...RESOLVABLE_EXTENSIONS.map((extension) => `${base}/index${extension}`));
  return candidates.find((candidate) => candidate !== '' && files[candidate] !== undefined) ?? null;
}

/** The build never touches the disk. */
function appFilesPlugin(files: AppFiles, bareImports: BareImports): Plugin {
  return {
    name: 'hogbase-app-files',
    setup(builder) {
      builder.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return { path: args.path, namespace: NAMESPACE };
        const relativeImport = args.path.startsWith('./') || args.path.startsWith('../') || args.path === '.';
        if (relativeImport) {
          const resolved = resolveAppFile(files, args.importer, args.path);
          if (resolved === null) return { errors: [{ text: `Cannot find module '${args.path}'` }] };
          return { path: resolved, namespace: NAMESPACE };
        }
        if (
          bareImports === 'all' ||
          (bareImports === 'runtime-modules' && RUNTIME_MODULES.includes(args.path))
        ) {
          return { path: args.path, external: true };
        }
        return { errors: [{ text: `Cannot find module '${args.path}'` }] };
      });
      builder.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => {
        const contents = files[args.path];
        if (contents === undefined) return { errors: [{ text: `Cannot find module '${args.path}'` }] };
        const loader = LOADERS[extensionOf(args.path)] ?? (typeof contents === 'string' ? 'text' : 'binary');
        return { contents, loader };
      });
    },
  };
}

async function describeErrors(errors: Message[]): Promise<string> {
  const formatted = await formatMessages(errors, { kind: 'error', color: false });
  return formatted.join('').trim();
}

interface BundleOptions {
  platform: 'neutral' | 'browser';
  bareImports: BareImports;
  jsx?: boolean;
}

/** A compile error comes back as text, never as a throw. */
async function bundle(
  files: AppFiles,
  entry: string,
  options: BundleOptions,
): Promise<{ code: string } | { error: string }> {
  try {
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      format: 'cjs',
      platform: options.platform,
      // QuickJS and any browser still in use run ES2020.
      target: 'es2020',
      logLevel: 'silent',
      ...(options.jsx
        ? { jsx: 'transform', jsxFactory: 'React.createElement', jsxFragment: 'React.Fragment' }
        : {}),
      plugins: [appFilesPlugin(files, options.bareImports)],
    });
    const output = result.outputFiles[0];
    if (!output) return { error: `Building ${entry} gave no output` };
    return { code: output.text };
  } catch (error) {
    const errors = (error as { errors?: Message[] }).errors;
    if (Array.isArray(errors) && errors.length > 0) return { error: await describeErrors(errors) };
    return { error: String((error as { message?: unknown }).message ?? error) };
  }
}

function builtFile(
  result: { code: string } | { error: string },
  wrap: (code: string) => string = (code) => code,
): BuiltFile {
  return 'code' in result
    ? { status: 'TRANSPILED', code: wrap(result.code) }
    : { status: 'ERROR', error: result.error };
}

/** PostHog's served-script form, `<code>().inject(…)`; esbuild's CommonJS assigns `module.exports`. */
export function wrapSiteApp(commonJs: string): string {
  return `(function () { let exports = {}; let module = { exports: exports };\n${commonJs}\nexports = module.exports; return exports; })`;
}

/** The page passes its own `require`: react and the like stay external. */
export function wrapFrontendApp(commonJs: string): string {
  return `"use strict";\nexport function getFrontendApp (require) { let exports = {}; let module = { exports: exports };\n${commonJs}\nexports = module.exports; return exports; }`;
}

/** What PostHog transpiles: the entry, `site.ts` and `frontend.tsx`. */
export async function buildApp(files: AppFiles, pluginJson: Pick<PluginJson, 'main'>): Promise<BuiltApp> {
  const built: BuiltApp = {};
  const [index, site, frontend] = await Promise.all([
    pluginJson.main === null
      ? undefined
      : bundle(files, pluginJson.main, { platform: 'neutral', bareImports: 'runtime-modules' }),
    files['site.ts'] === undefined
      ? undefined
      : bundle(files, 'site.ts', { platform: 'browser', bareImports: 'none' }),
    files['frontend.tsx'] === undefined
      ? undefined
      : bundle(files, 'frontend.tsx', { platform: 'browser', bareImports: 'all', jsx: true }),
  ]);
  if (index) built.index = builtFile(index);
  if (site) built.site = builtFile(site, wrapSiteApp);
  if (frontend) built.frontend = builtFile(frontend, wrapFrontendApp);
  return built;
}
