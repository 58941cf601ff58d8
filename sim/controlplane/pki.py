"""The real control plane's key material, made with ``cryptography``, written as files the binaries read.

One cluster CA signs kube-apiserver's serving certificate (loopback, ``localhost`` and the in-cluster
names of the ``kubernetes`` Service) and a client certificate for each identity the test world uses:
the admin (``O=system:masters``, what a kubeconfig holds), kube-controller-manager and kube-scheduler
(the user names RBAC's bootstrap bindings name), the emulated node (``system:node:NAME`` in
``system:nodes``, which also serves its kubelet endpoint with the serving certificate) and kube-apiserver
as the kubelets' client. Service-account tokens are signed with a key of their own. Keys are ECDSA P-256:
quick to make, and accepted by every component for serving, client and token signing alike.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=7)
SERVICE_IP = "10.0.0.1"  # the first address of --service-cluster-ip-range, the kubernetes Service's
SERVING_NAMES = (
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)


@dataclass(frozen=True)
class Identity:
    """A client certificate's subject: the user name (CN) and groups (O) the API server reads from it."""

    user: str
    groups: tuple[str, ...] = ()


ADMIN = Identity("arcsm-admin", ("system:masters",))
CONTROLLER_MANAGER = Identity("system:kube-controller-manager")
SCHEDULER = Identity("system:kube-scheduler")
# kube-apiserver as a client of the kubelets (pods/log): --kubelet-client-certificate.
KUBELET_CLIENT = Identity("kube-apiserver-kubelet-client")


def node(name: str) -> Identity:
    return Identity(f"system:node:{name}", ("system:nodes",))


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


class Authority:
    """The cluster CA; ``write(directory)`` lays out every file the control plane reads."""

    def __init__(self, now: datetime.datetime | None = None) -> None:
        self.now = now or datetime.datetime.now(datetime.UTC)
        self.key = _key()
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "arcsm-test-cluster-ca")])
        self.cert = (
            self._builder(name, self.key.public_key())
            .issuer_name(name)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self.key, hashes.SHA256())
        )

    def _builder(self, subject: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(subject)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.now - datetime.timedelta(minutes=5))
            .not_valid_after(self.now + VALIDITY)
        )

    def _issue(
        self, subject: x509.Name, usage: x509.ObjectIdentifier, san: list[x509.GeneralName] | None = None
    ) -> tuple[bytes, bytes]:
        key = _key()
        builder = (
            self._builder(subject, key.public_key())
            .issuer_name(self.cert.subject)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if san:
            builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        return _pem_cert(builder.sign(self.key, hashes.SHA256())), _pem_key(key)

    def serving(self, addresses: tuple[str, ...] = ("127.0.0.1",)) -> tuple[bytes, bytes]:
        """A serving certificate and key for the API server at ``addresses`` and its in-cluster names."""
        san: list[x509.GeneralName] = [x509.DNSName(n) for n in SERVING_NAMES]
        san += [x509.IPAddress(ipaddress.ip_address(a)) for a in (*addresses, SERVICE_IP)]
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")])
        return self._issue(subject, ExtendedKeyUsageOID.SERVER_AUTH, san)

    def client(self, identity: Identity) -> tuple[bytes, bytes]:
        """A client certificate and key that authenticate as ``identity``."""
        attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in identity.groups]
        attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, identity.user))
        return self._issue(x509.Name(attributes), ExtendedKeyUsageOID.CLIENT_AUTH)

    @property
    def ca_pem(self) -> bytes:
        return _pem_cert(self.cert)


@dataclass(frozen=True)
class Files:
    """Where ``write`` put each file."""

    directory: Path
    ca: Path
    ca_key: Path
    serving_cert: Path
    serving_key: Path
    service_account_key: Path  # private: signs tokens (apiserver, controller-manager)
    service_account_pub: Path  # public: verifies them (apiserver)

    def client(self, identity: Identity) -> tuple[Path, Path]:
        stem = identity.user.replace(":", "-")
        return self.directory / f"{stem}.crt", self.directory / f"{stem}.key"


def write(
    directory: Path, identities: tuple[Identity, ...], *, addresses: tuple[str, ...] = ("127.0.0.1",)
) -> Files:
    """Make a CA, a serving certificate, a client certificate per identity and a service-account key in
    ``directory`` (private keys readable by the owner alone)."""
    directory.mkdir(parents=True, exist_ok=True)
    authority = Authority()
    files = Files(
        directory=directory,
        ca=directory / "ca.crt",
        ca_key=directory / "ca.key",
        serving_cert=directory / "apiserver.crt",
        serving_key=directory / "apiserver.key",
        service_account_key=directory / "sa.key",
        service_account_pub=directory / "sa.pub",
    )

    def put(path: Path, data: bytes, *, private: bool = False) -> None:
        path.write_bytes(data)
        if private:
            path.chmod(0o600)

    put(files.ca, authority.ca_pem)
    put(files.ca_key, _pem_key(authority.key), private=True)
    cert, key = authority.serving(addresses)
    put(files.serving_cert, cert)
    put(files.serving_key, key, private=True)
    for identity in identities:
        cert_path, key_path = files.client(identity)
        cert, key = authority.client(identity)
        put(cert_path, cert)
        put(key_path, key, private=True)
    signing = _key()
    put(files.service_account_key, _pem_key(signing), private=True)
    put(
        files.service_account_pub,
        signing.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
    )
    return files
