import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { matchesEtag } from './etag.util';
import {
  documentedRoute,
  javascript,
  noContent,
  type DocumentedReply,
  type DocumentedRequest,
  type OperationDoc,
} from './openapi/documented-route.util';
import { RemoteConfigUnavailableError, TokenLookupUnavailableError } from './capture.errors';
import type { ProjectTokens } from './project-token.cache';
import type { RemoteConfigSource } from './remote-config/remote-config.cache';
import { SCRIPT_NOT_FOUND, SCRIPT_UNAVAILABLE } from './remote-config/remote-config.controller';

export interface SdkAssetRouteOptions {
  remoteConfig: RemoteConfigSource;
  tokens: ProjectTokens;
}

interface Asset {
  body: Buffer;
  etag: string;
}

const JAVASCRIPT = 'application/javascript; charset=utf-8';
/** The document's example of a served version. */
const SHIPPED_POSTHOG_JS_VERSION = (
  JSON.parse(readFileSync(require.resolve('posthog-js/package.json'), 'utf8')) as { version: string }
).version;
/** Versioned by posthog-js's `?v=` or path. */
const ASSET_CACHE_CONTROL = 'public, max-age=3600';
/** A script name of posthog-js's dist: no directory, no dot-dot. */
const ASSET_NAME = /^[a-z0-9][a-z0-9-]*(\.[a-z0-9-]+)*\.js$/;
/** Builds for bundlers and Node, which no page loads by URL. */
const NOT_SERVED = /^(main|module)\b/;

const ETAG = Type.String({ description: 'The version of the script; send it back in `If-None-Match`.' });
const IF_NONE_MATCH = Type.Object({
  'if-none-match': Type.Optional(Type.String({ description: 'The ETag of an earlier answer.' })),
});
const NAME = Type.String({
  description: "A script of posthog-js's `dist` for browsers: `array.js`, `surveys.js`, …",
  examples: ['array.js'],
});

const assetResponses = (cacheControl: string) => ({
  200: javascript('The script.', {
    etag: ETAG,
    'cache-control': Type.String({ description: `\`${cacheControl}\`` }),
  }),
  304: noContent('Unchanged since the ETag sent in `If-None-Match`.', { etag: ETAG }),
  404: SCRIPT_NOT_FOUND,
});

const STATIC_OPERATION = {
  operationId: 'static_retrieve',
  summary: 'A posthog-js script',
  description:
    "posthog-js's browser scripts, from the package this server ships with: `array.js` (what the HTML snippet " +
    'loads), and the extensions it loads when the remote config turns a feature on.',
  tags: ['sdk'],
  params: Type.Object({ name: NAME }),
  headers: IF_NONE_MATCH,
  response: assetResponses(ASSET_CACHE_CONTROL),
} satisfies OperationDoc;

const VERSIONED_STATIC_OPERATION = {
  ...STATIC_OPERATION,
  operationId: 'static_versioned_retrieve',
  summary: 'A posthog-js script of a version',
  description:
    'As `/static/{name}`, under `strict_script_versioning`: only for the version this server ships (another is ' +
    '404, and posthog-js falls back to the unversioned URL).',
  params: Type.Object({
    version: Type.String({
      description: "posthog-js's version: the one this server ships is served.",
      examples: [SHIPPED_POSTHOG_JS_VERSION],
    }),
    name: NAME,
  }),
} satisfies OperationDoc;

const ARRAY_OPERATION = {
  operationId: 'array_js_retrieve',
  summary: "posthog-js with the project's remote config",
  description: "`array.js` followed by the project's remote config script (`/array/{token}/config.js`).",
  tags: ['sdk'],
  params: Type.Object({ token: Type.String({ description: "The project's API key (`phc_…`)." }) }),
  headers: IF_NONE_MATCH,
  response: {
    ...assetResponses('public, no-cache'),
    503: SCRIPT_UNAVAILABLE,
  },
} satisfies OperationDoc;

type AssetReply = DocumentedReply<typeof STATIC_OPERATION>;

const notFound = (reply: AssetReply) => reply.type(JAVASCRIPT).code(404).send('/* Not found. */');

/**
 * posthog-js's browser scripts from the shipped package, as PostHog's assets host serves them:
 * `/static/<name>.js`, `/static/<version>/<name>.js` (this version only: posthog-js falls back to
 * the unversioned URL), and `/array/:token/array.js` with the project's remote config after it.
 */
export function registerSdkAssetRoutes(app: FastifyInstance, options: SdkAssetRouteOptions): void {
  const packageJson = require.resolve('posthog-js/package.json');
  const dist = path.join(path.dirname(packageJson), 'dist');
  const assets = new Map<string, Promise<Asset | null>>();
  let version: string | undefined;

  const asset = (name: string): Promise<Asset | null> => {
    if (!ASSET_NAME.test(name) || NOT_SERVED.test(name)) return Promise.resolve(null);
    let pending = assets.get(name);
    if (!pending) {
      pending = readFile(path.join(dist, name)).then(
        (body) => ({ body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` }),
        (failure: NodeJS.ErrnoException) => {
          if (failure.code === 'ENOENT') return null;
          assets.delete(name);
          throw failure;
        },
      );
      assets.set(name, pending);
    }
    return pending;
  };

  const serve = async (
    request: DocumentedRequest<typeof STATIC_OPERATION>,
    reply: AssetReply,
    name: string,
  ) => {
    const found = await asset(name);
    if (!found) return notFound(reply);
    void reply.header('ETag', found.etag).header('Cache-Control', ASSET_CACHE_CONTROL);
    if (matchesEtag(request.headers['if-none-match'], found.etag)) return reply.code(304).send();
    return reply.type(JAVASCRIPT).code(200).send(found.body);
  };

  documentedRoute(app, {
    method: 'GET',
    url: '/static/:name',
    doc: STATIC_OPERATION,
    browser: true,
    handler: (request, reply) => serve(request, reply, request.params.name),
  });
  documentedRoute(app, {
    method: 'GET',
    url: '/static/:version/:name',
    doc: VERSIONED_STATIC_OPERATION,
    browser: true,
    handler: async (request, reply) => {
      version ??= (JSON.parse(await readFile(packageJson, 'utf8')) as { version: string }).version;
      if (request.params.version !== version) return notFound(reply);
      return serve(request, reply, request.params.name);
    },
  });

  documentedRoute(app, {
    method: 'GET',
    url: '/array/:token/array.js',
    doc: ARRAY_OPERATION,
    browser: true,
    handler: async (request, reply) => {
      void reply.type(JAVASCRIPT);
      try {
        const teamId = await options.tokens.resolve(request.params.token);
        const config = teamId === null ? null : await options.remoteConfig.forTeam(teamId);
        const sdk = await asset('array.js');
        if (!config || !sdk) return await reply.code(404).send('/* No project has this token. */');
        const etag = `"${createHash('sha1').update(sdk.etag).update(config.script.etag).digest('base64url')}"`;
        void reply.header('ETag', etag).header('Cache-Control', 'public, no-cache');
        if (matchesEtag(request.headers['if-none-match'], etag)) return await reply.code(304).send();
        return await reply.code(200).send(`${sdk.body.toString('utf8')}\n\n${config.script.body}`);
      } catch (failure) {
        if (!(
          failure instanceof RemoteConfigUnavailableError || failure instanceof TokenLookupUnavailableError
        )) {
          throw failure;
        }
        return reply
          .header('Cache-Control', 'no-store')
          .code(503)
          .send('/* Transient error, please retry. */');
      }
    },
  });
}
