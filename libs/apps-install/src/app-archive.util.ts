import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { unzipSync } from 'fflate';
import { extract } from 'tar-stream';
import { AppInstallError } from './app-install.error';
import { isInNodeModules, safeEntryPath } from './app-files.util';

const gunzipAsync = promisify(gunzip);

export interface UnpackedArchive {
  /** Top folder still in place. */
  entries: Map<string, Uint8Array>;
  /** `git archive` writes the commit id there. */
  comment: string | null;
}

export type ArchiveFormat = 'gzip' | 'zip' | 'tar';

/** By magic bytes, never by URL or content type: a custom URL may answer anything. */
export function detectArchiveFormat(bytes: Uint8Array): ArchiveFormat | null {
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip';
  if (bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) {
    return 'zip';
  }
  if (bytes.length >= 262 && Buffer.from(bytes.subarray(257, 262)).toString('latin1') === 'ustar')
    return 'tar';
  return null;
}

export async function unpackArchive(bytes: Uint8Array, maxUnpackedBytes: number): Promise<UnpackedArchive> {
  const format = detectArchiveFormat(bytes);
  switch (format) {
    case 'gzip': {
      let tar: Buffer;
      try {
        // maxOutputLength bounds a gzip bomb before the tar parser sees a byte of it.
        tar = await gunzipAsync(bytes, { maxOutputLength: maxUnpackedBytes });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
          throw tooLarge(maxUnpackedBytes);
        }
        throw new AppInstallError(`The archive is not a valid gzip file: ${(error as Error).message}`);
      }
      return { entries: await readTar(tar), comment: null };
    }
    case 'tar':
      if (bytes.length > maxUnpackedBytes) throw tooLarge(maxUnpackedBytes);
      return { entries: await readTar(Buffer.from(bytes)), comment: null };
    case 'zip':
      return readZip(bytes, maxUnpackedBytes);
    case null:
      throw new AppInstallError('The URL did not answer with an archive (a zip or a gzipped tar file)');
  }
}

function tooLarge(maxUnpackedBytes: number): AppInstallError {
  return new AppInstallError(`The app is larger than ${maxUnpackedBytes} bytes once unpacked`);
}

async function readTar(tar: Buffer): Promise<Map<string, Uint8Array>> {
  const entries = new Map<string, Uint8Array>();
  const extractor = extract();
  extractor.end(tar);
  try {
    for await (const entry of extractor) {
      const { name, type } = entry.header;
      // Symlinks and hard links are never followed: their targets could point anywhere.
      const wanted = type === 'file' || type === 'contiguous-file';
      const path = safeEntryPath(name);
      if (!wanted || path === '' || isInNodeModules(path)) {
        entry.resume();
        continue;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      entries.set(path, new Uint8Array(Buffer.concat(chunks)));
    }
  } catch (error) {
    extractor.destroy();
    if (error instanceof AppInstallError) throw error;
    throw new AppInstallError(`The archive is not a valid tar file: ${(error as Error).message}`);
  }
  return entries;
}

function readZip(bytes: Uint8Array, maxUnpackedBytes: number): UnpackedArchive {
  let declaredTotal = 0;
  let unzipped: Record<string, Uint8Array>;
  try {
    unzipped = unzipSync(bytes, {
      filter: (file) => {
        if (file.name.endsWith('/')) return false;
        const path = safeEntryPath(file.name);
        if (isInNodeModules(path)) return false;
        // NOTE: fflate inflates into a buffer of the declared size and never grows it, so summing
        // declared sizes bounds memory even when an entry lies about its size.
        declaredTotal += file.originalSize;
        if (declaredTotal > maxUnpackedBytes) throw tooLarge(maxUnpackedBytes);
        return true;
      },
    });
  } catch (error) {
    if (error instanceof AppInstallError) throw error;
    throw new AppInstallError(`The archive is not a valid zip file: ${(error as Error).message}`);
  }
  const entries = new Map<string, Uint8Array>();
  for (const [name, content] of Object.entries(unzipped)) entries.set(safeEntryPath(name), content);
  return { entries, comment: zipComment(bytes) };
}

/** In the end-of-central-directory record. */
function zipComment(bytes: Uint8Array): string | null {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lowest = Math.max(0, view.length - 22 - 0xffff);
  for (let offset = view.length - 22; offset >= lowest; offset -= 1) {
    if (view.readUInt32LE(offset) !== 0x06054b50) continue;
    const length = view.readUInt16LE(offset + 20);
    if (offset + 22 + length !== view.length) continue;
    return length === 0 ? null : view.subarray(offset + 22, offset + 22 + length).toString('utf8');
  }
  return null;
}
