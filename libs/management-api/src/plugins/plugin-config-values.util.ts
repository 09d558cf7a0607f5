import type { ActivityChange } from '../activity/activity-log.service';
import { validationError } from '../common/api.error';

/** What PostHog shows in place of a secret value, and what a client may send back to keep it. */
export const SECRET_MASK = '**************** POSTHOG SECRET FIELD ****************';

export interface ConfigField {
  key: string;
  name: string;
  type: string;
  required: boolean;
  secret: boolean;
  choices: unknown[] | undefined;
  hasDefault: boolean;
}

/** The schema's fields that hold a value: markdown-only entries have no key. */
export function configFields(schema: unknown): ConfigField[] {
  if (!Array.isArray(schema)) return [];
  return schema.flatMap((entry: unknown) => {
    if (!entry || typeof entry !== 'object') return [];
    const field = entry as Record<string, unknown>;
    if (typeof field.key !== 'string' || field.key === '') return [];
    return [
      {
        key: field.key,
        name: typeof field.name === 'string' && field.name !== '' ? field.name : field.key,
        type: typeof field.type === 'string' ? field.type : 'string',
        required: field.required === true,
        secret: field.secret === true,
        choices: Array.isArray(field.choices) ? field.choices : undefined,
        hasDefault: field.default !== undefined && field.default !== null && field.default !== '',
      },
    ];
  });
}

export function secretKeys(schema: unknown): Set<string> {
  return new Set(
    configFields(schema)
      .filter((field) => field.secret)
      .map((field) => field.key),
  );
}

const isMissing = (value: unknown) => value === undefined || value === null || value === '';

/**
 * Secrets must already be resolved. Attachments come as uploads: an attachment's value sent back
 * as shown (`{saved: true, …}`) is dropped, any other is refused.
 */
export function validateConfig(schema: unknown, config: Record<string, unknown>): Record<string, unknown> {
  const fields = new Map(configFields(schema).map((field) => [field.key, field]));
  const cleaned: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    const field = fields.get(key);
    if (!field) throw validationError(`"${key}" is not a field of this app's config.`, 'config');
    if (value === null || value === undefined) continue;
    const attr = `config__${key}`;
    switch (field.type) {
      case 'attachment':
        if (isShownAttachment(value)) continue;
        throw validationError(
          `"${field.name}" is an attachment: upload it as the file add_attachment[${key}].`,
          attr,
        );
      case 'choice':
        if (field.choices && !field.choices.includes(value)) {
          throw validationError(
            `${JSON.stringify(value)} is not a valid choice for "${field.name}".`,
            attr,
            'invalid_choice',
          );
        }
        break;
      case 'json':
        if (typeof value !== 'string') throw validationError(`"${field.name}" must be a JSON text.`, attr);
        try {
          JSON.parse(value);
        } catch {
          throw validationError(`"${field.name}" is not valid JSON.`, attr);
        }
        break;
      default:
        if (typeof value !== 'string') throw validationError(`"${field.name}" must be a string.`, attr);
    }
    cleaned[key] = value;
  }
  for (const field of fields.values()) {
    if (field.type === 'attachment') continue;
    if (field.required && !field.hasDefault && isMissing(cleaned[field.key])) {
      throw validationError(`"${field.name}" is required.`, `config__${field.key}`, 'required');
    }
  }
  return cleaned;
}

export function maskConfig(schema: unknown, config: Record<string, unknown>): Record<string, unknown> {
  const secrets = secretKeys(schema);
  return Object.fromEntries(
    Object.entries(config).map(([key, value]) => [
      key,
      secrets.has(key) && !isMissing(value) ? SECRET_MASK : value,
    ]),
  );
}

/** A config value as the API shows an attachment, which a client may send back unchanged. */
function isShownAttachment(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as Record<string, unknown>).saved === true;
}

export interface AttachmentChanges {
  add: Map<string, AttachmentUpload>;
  remove: Set<string>;
}

export interface AttachmentUpload {
  contentType: string;
  fileName: string;
  contents: Buffer;
}

export const noAttachmentChanges = (): AttachmentChanges => ({ add: new Map(), remove: new Set() });

export const hasAttachmentChanges = (changes: AttachmentChanges) =>
  changes.add.size + changes.remove.size > 0;

/** The keys that hold a file once `changes` apply; a required attachment must end with one. */
export function attachmentKeysAfter(
  schema: unknown,
  existing: ReadonlySet<string>,
  changes: AttachmentChanges,
): Set<string> {
  const fields = new Map(configFields(schema).map((field) => [field.key, field]));
  const named = [
    ...[...changes.add.keys()].map((key) => [key, `add_attachment[${key}]`] as const),
    ...[...changes.remove].map((key) => [key, `remove_attachment[${key}]`] as const),
  ];
  for (const [key, formField] of named) {
    const field = fields.get(key);
    if (!field) throw validationError(`"${key}" is not a field of this app's config.`, formField);
    if (field.type !== 'attachment') {
      throw validationError(`"${field.name}" is not an attachment: send its value in config.`, formField);
    }
    if (changes.add.has(key) && changes.remove.has(key)) {
      throw validationError(`"${field.name}" is both added and removed in one request.`, formField);
    }
  }
  const after = new Set([...existing].filter((key) => !changes.remove.has(key)));
  for (const key of changes.add.keys()) after.add(key);
  for (const field of fields.values()) {
    if (field.type === 'attachment' && field.required && !after.has(field.key)) {
      throw validationError(`"${field.name}" is required.`, `config__${field.key}`, 'required');
    }
  }
  return after;
}

/** The config keys whose value changed, as activity changes; secret values stay masked. */
export function changedKeys(
  schema: unknown,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): ActivityChange[] {
  const shownBefore = maskConfig(schema, before);
  const shownAfter = maskConfig(schema, after);
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.flatMap((key) => {
    if (JSON.stringify(before[key]) === JSON.stringify(after[key])) return [];
    const action: ActivityChange['action'] =
      before[key] === undefined ? 'created' : after[key] === undefined ? 'deleted' : 'changed';
    return [
      {
        type: 'PluginConfig',
        action,
        field: key,
        before: shownBefore[key] ?? null,
        after: shownAfter[key] ?? null,
      },
    ];
  });
}

export interface StoredAttachment {
  key: string;
  fileName: string;
}

/** The keys to delete and PostHog's attachment_created/_updated/_deleted activities, added first. */
export function attachmentActivities(
  existing: StoredAttachment[],
  changes: AttachmentChanges,
  secrets: ReadonlySet<string>,
): { removed: string[]; activities: [string, ActivityChange[]][] } {
  const before = new Map(existing.map((attachment) => [attachment.key, attachment.fileName]));
  // A secret attachment's file name is shown masked, so its activity names none either.
  const shown = (key: string, fileName: string | undefined) =>
    fileName === undefined ? null : secrets.has(key) ? SECRET_MASK : fileName;
  const activities: [string, ActivityChange[]][] = [];
  for (const [key, upload] of changes.add) {
    const previous = before.get(key);
    activities.push([
      previous === undefined ? 'attachment_created' : 'attachment_updated',
      [
        {
          type: 'PluginConfig',
          action: previous === undefined ? 'created' : 'changed',
          field: key,
          before: shown(key, previous),
          after: shown(key, upload.fileName),
        },
      ],
    ]);
  }
  const removed = [...changes.remove].filter((key) => before.has(key));
  for (const key of removed) {
    activities.push([
      'attachment_deleted',
      [
        {
          type: 'PluginConfig',
          action: 'deleted',
          field: key,
          before: shown(key, before.get(key)),
          after: null,
        },
      ],
    ]);
  }
  return { removed, activities };
}
