/**
 * A certificate authority made in memory: the interceptor's per-runtime CA (docs/isolation.md, "The
 * wire check") and the test harness's CA (src/testing/first-party.ts). Certificates come from
 * `@peculiar/x509` (a maintained X.509 library) over node's WebCrypto; nothing here writes ASN.1 by hand.
 * The private keys are never written: node:tls takes them as PEM strings. The runtime's CA key stays in
 * the runtime and is dropped after signing (issueLeaves); the leaves' keys reach its interceptor's
 * process over IPC only.
 */
import "reflect-metadata"; // @peculiar/x509's dependency injection (tsyringe) needs the Reflect metadata API.
import { KeyObject, webcrypto } from "node:crypto";
import { createSecureContext, type SecureContext } from "node:tls";
import { AsnConvert } from "@peculiar/asn1-schema";
import { GeneralName, GeneralSubtree, GeneralSubtrees, NameConstraints, id_ce_nameConstraints } from "@peculiar/asn1-x509";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

export interface CaOptions {
  /** Subject common name. */
  name: string;
  /** Hosts the CA may sign for; the CA carries them as a critical name constraint. */
  hosts: readonly string[];
  /** Validity from now (default one day: a runtime's CA dies with it). */
  validityMs?: number;
}

export interface MemoryCa {
  /** The CA certificate, PEM: what the client must trust. */
  readonly certPem: string;
  readonly hosts: readonly string[];
  /** A TLS context for `host` (a leaf certificate signed by this CA), made once per host. */
  contextFor(host: string): Promise<SecureContext>;
}

const serial = () => Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString("hex").replace(/^[89a-f]/, "1");

const pkcs8Pem = (key: webcrypto.CryptoKey): string => KeyObject.from(key).export({ type: "pkcs8", format: "pem" }) as string;

/** `onLeaf` sees each leaf's key and chain as they are made (issueLeaves). */
export async function createMemoryCa(options: CaOptions, onLeaf?: (host: string, key: string, cert: string) => void): Promise<MemoryCa> {
  const validityMs = options.validityMs ?? 24 * 3600_000;
  // Back-dated a minute: a child whose clock is a little behind must still accept it.
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + validityMs);
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, false, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const constraints = new NameConstraints({
    permittedSubtrees: new GeneralSubtrees(options.hosts.map((host) => new GeneralSubtree({ base: new GeneralName({ dNSName: host }) }))),
  });
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${options.name}`,
    notBefore,
    notAfter,
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      new x509.Extension(id_ce_nameConstraints, true, AsnConvert.serialize(constraints)),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const certPem = ca.toString("pem");
  const contexts = new Map<string, Promise<SecureContext>>();

  const issue = async (host: string): Promise<SecureContext> => {
    const leafKeys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
    const leaf = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: `CN=${host}`,
      issuer: ca.subject,
      notBefore,
      notAfter,
      publicKey: leafKeys.publicKey,
      signingKey: keys.privateKey,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
        new x509.SubjectAlternativeNameExtension([{ type: "dns", value: host }], false),
        await x509.AuthorityKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    const key = pkcs8Pem(leafKeys.privateKey);
    const chain = `${leaf.toString("pem")}\n${certPem}`;
    onLeaf?.(host, key, chain);
    return createSecureContext({ key, cert: chain });
  };

  return {
    certPem,
    hosts: options.hosts,
    contextFor(host: string) {
      if (!options.hosts.includes(host)) return Promise.reject(new Error(`this CA does not sign for ${host}`));
      let context = contexts.get(host);
      if (!context) {
        context = issue(host);
        contexts.set(host, context);
        context.catch(() => contexts.delete(host));
      }
      return context;
    },
  };
}

/** A CA's certificate and one leaf per host (key and chain, PEM), with the CA's key already dropped. */
export interface IssuedLeaves {
  certPem: string;
  leaves: Record<string, { key: string; cert: string }>;
}

/**
 * Makes a CA, signs a leaf for each of its hosts, and drops the CA's key: nothing can sign another
 * certificate afterwards. The runtime does this and hands the leaves to its interceptor's process
 * (issued.ts), which then needs no X.509 code of its own. The CA certificate comes first, so a CLI can be
 * pointed at it while the leaves are signed.
 */
export async function issueCa(options: CaOptions): Promise<{ certPem: string; leaves: Promise<IssuedLeaves> }> {
  const leaves: IssuedLeaves["leaves"] = {};
  const ca = await createMemoryCa(options, (host, key, cert) => (leaves[host] = { key, cert }));
  return { certPem: ca.certPem, leaves: Promise.all(options.hosts.map((host) => ca.contextFor(host))).then(() => ({ certPem: ca.certPem, leaves })) };
}

export async function issueLeaves(options: CaOptions): Promise<IssuedLeaves> {
  return (await issueCa(options)).leaves;
}
