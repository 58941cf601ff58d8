"""The emulated cluster's TLS: a cluster CA and the API server's serving certificate, made with
``cryptography``.

kube-apiserver serves HTTPS with a certificate its cluster CA signed, for the names a client inside the
cluster uses (``kubernetes``, ``kubernetes.default``, ``kubernetes.default.svc``,
``kubernetes.default.svc.cluster.local``, the Service's ClusterIP) and the addresses it listens on. A pod
finds that CA as ``ca.crt`` in its service-account volume (from the ``kube-root-ca.crt`` ConfigMap,
``sim.publishing``) and verifies the server with it, as kubernetes_asyncio's in-cluster loader does.

``material()`` makes the key material once per process and every world shares it: key generation is the
expensive part, and worlds start by the hundred in a test run. The keys are ECDSA P-256 (fast to make;
kubeadm's are RSA, which clients cannot tell apart here). ``server_context()`` is the SSL context the
HTTPS site serves with, built once as well.

Known limits: no client-certificate authentication (the context asks for no client certificate); the
certificates are valid for a year from the first use in the process; nothing rotates them.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVICE_IP = "10.96.0.1"  # the ClusterIP of the ``kubernetes`` Service
DNS_NAMES = (
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
    "localhost",
)
IP_ADDRESSES = ("127.0.0.1", SERVICE_IP)
VALIDITY = datetime.timedelta(days=365)


@dataclass(frozen=True)
class KeyMaterial:
    """PEM bytes of the cluster CA certificate and of the serving certificate and its key."""

    ca_cert: bytes
    server_cert: bytes
    server_key: bytes = b""

    def __repr__(self) -> str:  # never print a private key
        return "KeyMaterial(ca_cert=..., server_cert=..., server_key=<hidden>)"


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def make(
    now: datetime.datetime | None = None,
    *,
    dns_names: tuple[str, ...] = DNS_NAMES,
    ip_addresses: tuple[str, ...] = IP_ADDRESSES,
    ca_common_name: str = "kubernetes",
    common_name: str = "kube-apiserver",
) -> KeyMaterial:
    """New key material: a self-signed CA (CN ``kubernetes``, as kubeadm names it) and a serving
    certificate (CN ``kube-apiserver``) for ``DNS_NAMES`` and ``IP_ADDRESSES``; another server of the
    emulated world (the fake Azure, ``sim.keyvault``) names its own CA, names and addresses."""
    start = (now or datetime.datetime.now(datetime.UTC)) - datetime.timedelta(hours=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ca_common_name)])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=True,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    names += [x509.IPAddress(ipaddress.ip_address(a)) for a in ip_addresses]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + VALIDITY)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return KeyMaterial(
        ca_cert=ca.public_bytes(serialization.Encoding.PEM),
        server_cert=cert.public_bytes(serialization.Encoding.PEM),
        server_key=_pem_key(key),
    )


@functools.cache
def material() -> KeyMaterial:
    """The key material of this process (made on first use)."""
    return make()


@functools.cache
def server_context() -> ssl.SSLContext:
    """The SSL context the API server's HTTPS site serves with (built on first use)."""
    return serving_context(material())


def serving_context(keys: KeyMaterial) -> ssl.SSLContext:
    """An SSL context that serves with ``keys``' certificate."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    # load_cert_chain reads files only: write them privately, load, and remove them at once.
    with tempfile.TemporaryDirectory(prefix="arcsm-sim-tls-") as directory:
        cert, key = Path(directory) / "tls.crt", Path(directory) / "tls.key"
        cert.write_bytes(keys.server_cert)
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(keys.server_key)
        context.load_cert_chain(cert, key)
    return context
