import { RequestMethod, type INestApplicationContext } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { ACCESS_RULE, AccessRule } from '../auth/access.decorator';
import { accessRuleForPath } from './project-scoped-paths.util';

export interface RouteEntry {
  method: string;
  /** Express-style path, e.g. `/api/organizations/:organization_id/invites/:id`. */
  path: string;
  handler: string;
  rule: AccessRule | undefined;
}

function joinPath(...parts: string[]): string {
  return `/${parts
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/')}`;
}

/** Every route the app's controllers declare, with the access rule each one carries (if any). */
export function routeTable(app: INestApplicationContext): RouteEntry[] {
  const routes: RouteEntry[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const controllerPaths = [Reflect.getMetadata(PATH_METADATA, controller) ?? ''].flat() as string[];
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const methodPath = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        if (methodPath === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
        const rule = Reflect.getMetadata(ACCESS_RULE, handler) as AccessRule | undefined;
        for (const controllerPath of controllerPaths) {
          for (const path of [methodPath].flat()) {
            const fullPath = joinPath(controllerPath, path);
            routes.push({
              method,
              path: fullPath,
              handler: `${controller.name}.${name}`,
              rule: rule && accessRuleForPath(rule, fullPath),
            });
          }
        }
      }
    }
  }
  return routes.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}

/** Refuses to start an app in which some route forgot to say who may call it. */
export function assertEveryRouteDeclaresAccess(app: INestApplicationContext): void {
  const missing = routeTable(app).filter((route) => !route.rule);
  if (missing.length > 0) {
    throw new Error(
      `routes without an @Access rule: ${missing.map((route) => `${route.method} ${route.path} (${route.handler})`).join(', ')}`,
    );
  }
}
