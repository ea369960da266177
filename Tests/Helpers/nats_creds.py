#!/usr/bin/env python3
"""Makes a throwaway NATS operator, account and user (decentralised JWT auth, as
`nsc` would) for the tests: writes DIR/operator.jwt, DIR/accounts.conf (the system
account and the
resolver lines for nats-server's configuration) and DIR/user.creds (the
credentials file a client loads). The account has JetStream enabled.

    nats_creds.py DIR

Nkeys: an ed25519 key with a one-byte role prefix and a CRC-16 (XMODEM), in
base32 without padding; a JWT is signed by its issuer's nkey (alg ed25519-nkey).
Standard library and python3-cryptography only.
"""
import base64
import hashlib
import json
import os
import sys
import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

PREFIX = {"operator": 14 << 3, "account": 0, "user": 20 << 3}
SEED = 18 << 3


def crc16(data):
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def b32(data):
    return base64.b32encode(data).decode().rstrip("=")


def checked(data):
    crc = crc16(data)
    return data + bytes([crc & 0xFF, crc >> 8])


class Key:
    def __init__(self, role):
        self.role = role
        self.private = Ed25519PrivateKey.generate()
        raw_public = self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        raw_seed = self.private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        prefix = PREFIX[role]
        self.public = b32(checked(bytes([prefix]) + raw_public))
        self.seed = b32(checked(bytes([SEED | (prefix >> 5), (prefix & 31) << 3]) + raw_seed))


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt(issuer, subject, name, nats):
    claims = {"jti": "", "iat": int(time.time()), "iss": issuer.public, "name": name, "sub": subject, "nats": nats}
    claims["jti"] = b32(hashlib.sha256(json.dumps(claims, separators=(",", ":")).encode()).digest())
    header = b64url(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = b64url(json.dumps(claims, separators=(",", ":")).encode())
    signature = issuer.private.sign((header + "." + body).encode())
    return header + "." + body + "." + b64url(signature)


def main():
    directory = sys.argv[1]
    operator, account, system, user = Key("operator"), Key("account"), Key("account"), Key("user")
    unlimited = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True, "conn": -1,
                 "leaf": -1, "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1}
    operator_jwt = jwt(operator, operator.public, "airlock-test", {"type": "operator", "version": 2})
    account_jwt = jwt(operator, account.public, "airlock", {"type": "account", "version": 2, "limits": unlimited})
    # JetStream needs a system account for its own subscriptions.
    system_limits = dict(unlimited, mem_storage=0, disk_storage=0, streams=0, consumer=0)
    system_jwt = jwt(operator, system.public, "SYS", {"type": "account", "version": 2, "limits": system_limits})
    user_jwt = jwt(account, user.public, "publisher",
                   {"type": "user", "version": 2, "pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1})
    with open(os.path.join(directory, "operator.jwt"), "w") as f:
        f.write(operator_jwt + "\n")
    with open(os.path.join(directory, "accounts.conf"), "w") as f:
        f.write('operator: "%s"\nsystem_account: %s\nresolver: MEMORY\nresolver_preload: { %s: "%s", %s: "%s" }\n'
                % (os.path.join(directory, "operator.jwt"), system.public, account.public, account_jwt, system.public, system_jwt))
    with open(os.path.join(directory, "user.creds"), "w") as f:
        f.write("-----BEGIN NATS USER JWT-----\n%s\n------END NATS USER JWT------\n\n"
                "************************* IMPORTANT *************************\n"
                "NKEY Seed printed below can be used to sign and prove identity.\n\n"
                "-----BEGIN USER NKEY SEED-----\n%s\n------END USER NKEY SEED------\n" % (user_jwt, user.seed))
    os.chmod(os.path.join(directory, "user.creds"), 0o600)


if __name__ == "__main__":
    main()
