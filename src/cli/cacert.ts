import { readFile } from 'node:fs/promises';
import { UsageError } from './errors.js';

/** A CA file to trust, and what named it, for the messages: `--cacert`, `KB_CA_CERT` or `profile "NAME"`. */
export interface CaFile {
  path: string;
  from: string;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The certificates of a CA file (PEM, one or more), checked here so that a wrong file is one message naming it and
 * where it came from (exit 2), not an OpenSSL error at the first connection.
 */
export async function readCaFile(file: CaFile): Promise<string[]> {
  const named = `the CA file ${file.path} (from ${file.from})`;
  let text: string;
  try {
    text = await readFile(file.path, 'utf8');
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : message;
    throw new UsageError(`cannot read ${named}: ${why}`, 'Nothing was sent. Give a readable PEM file of the CA that signed the deployment\'s certificate.');
  }
  const certificates = text.match(PEM_CERTIFICATE) ?? [];
  const { X509Certificate } = await import('node:crypto');
  const readable = certificates.every((pem) => {
    try {
      new X509Certificate(pem);
      return true;
    } catch {
      return false;
    }
  });
  if (certificates.length === 0 || !readable) {
    throw new UsageError(`${named} holds no readable PEM certificate (-----BEGIN CERTIFICATE-----)`, 'Nothing was sent.');
  }
  return certificates;
}

/**
 * The certificates of NODE_EXTRA_CA_CERTS, which Node trusts by default: a dispatcher given CAs of the user's trusts
 * Node's bundled roots and those (src/client/tls.ts), but Node before 22.15 cannot list the extra ones, so they are
 * read here. None when unset or unreadable: Node warned of that at start, and trusts its roots alone.
 */
export async function nodeExtraCertificates(path: string | undefined): Promise<string[]> {
  if (path === undefined) return [];
  try {
    return (await readFile(path, 'utf8')).match(PEM_CERTIFICATE) ?? [];
  } catch {
    return [];
  }
}
