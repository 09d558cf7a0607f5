/** Scope objects a personal API key may name (PostHog's list), each with `:read` and `:write`. */
export const SCOPE_OBJECTS = [
  'action',
  'access_control',
  'activity_log',
  'annotation',
  'batch_export',
  'batch_import',
  'cohort',
  'dashboard',
  'dashboard_template',
  'early_access_feature',
  'error_tracking',
  'event_definition',
  'experiment',
  'export',
  'feature_flag',
  'file_system',
  'group',
  'hog_function',
  'insight',
  'notebook',
  'organization',
  'organization_member',
  'person',
  'plugin',
  'project',
  'property_definition',
  'query',
  'session_recording',
  'session_recording_playlist',
  'sharing_configuration',
  'subscription',
  'survey',
  'user',
  'webhook',
] as const;

export type ScopeObject = (typeof SCOPE_OBJECTS)[number];
export type Scope = `${ScopeObject}:${'read' | 'write'}`;

const SCOPE_PATTERN = new RegExp(`^(${SCOPE_OBJECTS.join('|')}):(read|write)$`);

export function isValidScope(scope: string): boolean {
  return scope === '*' || SCOPE_PATTERN.test(scope);
}

/**
 * Whether a key's scopes grant `required`. No scopes at all (a legacy key) or `*` grants all;
 * `<object>:write` also grants `<object>:read`.
 */
export function scopesGrant(keyScopes: readonly string[] | null, required: Scope): boolean {
  if (!keyScopes || keyScopes.length === 0 || keyScopes.includes('*')) return true;
  if (keyScopes.includes(required)) return true;
  const [object, action] = required.split(':');
  return action === 'read' && keyScopes.includes(`${object}:write`);
}
