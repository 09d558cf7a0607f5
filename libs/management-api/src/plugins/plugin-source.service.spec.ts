import { ApiError } from '../common/api.error';
import { PIPELINE_APP_FIELDS, UpdatePipelineAppDto } from './plugin.dto';
import { updateSourceBody } from './plugin-source.service';
import { getMetadataStorage } from 'class-validator';

function refusal(body: unknown): { detail: string; attr: string | null } {
  try {
    updateSourceBody(body);
  } catch (error) {
    if (error instanceof ApiError) return { detail: error.detail, attr: error.attr };
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(body)}`);
}

describe('updateSourceBody', () => {
  it('reads keys that are all writable fields as the app fields', () => {
    expect(updateSourceBody({ name: 'R', description: 'd', tag: 'v9' })).toEqual({ kind: 'fields' });
  });

  it('reads keys that are all file names (with an extension) as files, null deleting one', () => {
    expect(updateSourceBody({ 'plugin.json': '{}', 'index.ts': '', 'notes.md': null })).toEqual({
      kind: 'files',
      changes: new Map([
        ['plugin.json', '{}'],
        ['index.ts', ''],
        ['notes.md', null],
      ]),
    });
    expect(updateSourceBody({})).toEqual({ kind: 'files', changes: new Map() });
  });

  it('refuses a mix of fields and files, naming both', () => {
    const { detail } = refusal({ name: 'R', 'index.ts': 'x' });
    expect(detail).toContain('"name"');
    expect(detail).toContain('"index.ts"');
  });

  it('refuses a key that is neither a field nor a file name, naming it', () => {
    expect(refusal({ tag: 'v1', Makefile: 'all:', url: 'x' })).toEqual({
      detail: expect.stringContaining('"Makefile", "url"'),
      attr: 'Makefile',
    });
  });

  it('refuses file names that could name a folder, and bodies that are not objects', () => {
    expect(refusal({ '../index.ts': 'x' }).attr).toBe('../index.ts');
    expect(refusal(['index.ts']).detail).toBe('Invalid data. Expected a dictionary, but got list.');
  });

  it('knows exactly the writable fields of PATCH :id/', () => {
    const validated = getMetadataStorage()
      .getTargetValidationMetadatas(UpdatePipelineAppDto, '', true, false)
      .map((metadata) => metadata.propertyName);
    expect([...new Set(validated)].sort()).toEqual([...PIPELINE_APP_FIELDS].sort());
  });
});
