/**
 * The client's side of TLS (docs/contract.md, TLS): the CAs it trusts, and what it says of a certificate it
 * does not trust.
 */

/**
 * What undici's connector adds to tls.connect for CAs of the user's (`--cacert`, `KB_CA_CERT`, a profile's): those on
 * top of the ones Node trusts by default (a `ca` option alone would replace them). As curl does since 7.68, a
 * certificate given is a trust anchor even when it is not a root: a profile's CA may be kb serve's own certificate,
 * whose issuer the client never sees.
 */
export async function trustOptions(ca: readonly string[] | undefined): Promise<{ ca: string[]; allowPartialTrustChain: true } | undefined> {
  if (ca === undefined || ca.length === 0) return undefined;
  // node:tls is loaded only then: a plain http deployment never needs it (nor does undici load it).
  const { rootCertificates } = await import('node:tls');
  return { ca: [...rootCertificates, ...ca], allowPartialTrustChain: true };
}

/** OpenSSL's and Node's codes for a certificate that is not trusted, or that names another host. */
export function isTlsCode(code: string): boolean {
  return /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_)/.test(code) || code.includes('SELF_SIGNED') || code === 'HOSTNAME_MISMATCH';
}

/** A verification failure (the certificate), not a protocol one (a plain HTTP server on that port, a TLS version). */
function isCertificateCode(code: string): boolean {
  return /^(CERT_|UNABLE_TO_)/.test(code) || code.includes('SELF_SIGNED') || code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH';
}

/** How a user trusts a deployment's certificate, curl's names first. */
export const TRUST_HELP =
  'If you trust it, give the CA that signed it (or the certificate itself) with --cacert FILE or KB_CA_CERT=FILE; `kb auth login --cacert FILE` saves it in the profile.';

/** The first of an error and its causes that carries a code: the one Node's TLS layer raised. */
function codedError(error: unknown): { code: string } | undefined {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 8; depth++) {
    const { code, cause, errors } = current as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string') return current as { code: string };
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : cause;
  }
  return undefined;
}

/** A certificate's subject in one line (`CN=kb.example.com, O=Example`), as Node's parsed form gives it. */
function subjectOf(subject: Record<string, string | string[]> | undefined): string | undefined {
  if (subject === undefined) return undefined;
  const parts = Object.entries(subject).flatMap(([field, value]) => (Array.isArray(value) ? value : [value]).map((one) => `${field}=${one}`));
  return parts.length === 0 ? undefined : parts.join(', ');
}

/**
 * The subject of the certificate a server presents, by a handshake of its own that checks nothing and sends nothing
 * (Node gives no certificate with a failed verification); undefined when it cannot be had in `timeoutMs`.
 */
async function presentedSubject(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  const { connect } = await import('node:tls');
  const servername = /^[\d.]+$|:/.test(host) ? undefined : host;
  return new Promise((resolve) => {
    const socket = connect({ host, port, rejectUnauthorized: false, ...(servername === undefined ? {} : { servername }) }, () => {
      const subject = subjectOf(socket.getPeerCertificate().subject as unknown as Record<string, string> | undefined);
      socket.destroy();
      resolve(subject);
    });
    socket.setTimeout(timeoutMs, () => socket.destroy());
    socket.on('error', () => resolve(undefined));
    socket.on('close', () => resolve(undefined));
  });
}

/**
 * The words for a certificate the client refused: the host, the certificate's subject, and OpenSSL's reason, e.g.
 * `the certificate of 127.0.0.1:8443 (subject CN=kb) is not trusted: self-signed certificate in certificate chain`.
 * Undefined for any other TLS failure. The subject comes from the error (a name mismatch carries the certificate), else
 * from a second handshake, made only directly (`direct`: no proxy lies between).
 */
export async function untrustedCertificate(error: unknown, url: string, direct: boolean, timeoutMs: number): Promise<string | undefined> {
  const failed = codedError(error);
  if (failed === undefined || !isCertificateCode(failed.code)) return undefined;
  const { code } = failed;
  const { hostname, port, protocol } = new URL(url);
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  const where = `${hostname}:${port || (protocol === 'https:' ? 443 : 80)}`;
  const carried = (failed as { cert?: { subject?: Record<string, string> } }).cert?.subject;
  const subject = subjectOf(carried) ?? (direct ? await presentedSubject(host, Number(port || 443), timeoutMs) : undefined);
  const reason = (failed as { reason?: unknown }).reason ?? (failed as { message?: unknown }).message;
  const mismatch = code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH';
  const of = `the certificate of ${where}${subject === undefined ? '' : ` (subject ${subject})`}`;
  return mismatch ? `${of} does not name ${hostname}: ${String(reason)}` : `${of} is not trusted: ${String(reason)}`;
}
