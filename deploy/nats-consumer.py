#!/usr/bin/env python3
"""A consumer of airlock's JetStream stream, in Python's standard library alone.

It reads the stream through a durable pull consumer with explicit
acknowledgement: JetStream remembers, under the durable name, what this
consumer has acknowledged, so a consumer that stops (or crashes) resumes where
it left off. A message it received but had not acknowledged when it stopped is
delivered again: a consumer must therefore be idempotent on the message id
(`Nats-Msg-Id`, the drop id and the event, such as `20261201T120000Z-0a1b2c3d:accepted`),
for instance by recording the ids it has handled in the same transaction as
its work, and skipping one it has seen.

Each message handled is printed as one JSON line: the stream sequence, the
subject, the message id, and the payload (the `airlock events` line, parsed).

    nats-consumer.py --server nats://127.0.0.1:4222 --stream AIRLOCK --durable tickets \\
        [--subject 'airlock.*.rejected'] [--tls-ca FILE [--tls-cert FILE --tls-key FILE]] \\
        [--user-password-file FILE | --creds FILE] [--idle-seconds 2] [--info] [--raw]

With --info it prints the stream's state (messages, first and last sequence) and
exits. It exits after --idle-seconds without a new message (0: never).
"""
import argparse
import base64
import json
import os
import socket
import ssl
import sys
import time
import urllib.parse


class Connection:
    """One NATS connection: the text protocol, headers on, TLS when asked."""

    def __init__(self, url, tls_ca=None, tls_cert=None, tls_key=None, user_password=None, creds=None, timeout=10):
        parsed = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((parsed.hostname, parsed.port or 4222), timeout=timeout)
        self.buffer = b""
        info = json.loads(self._line()[len(b"INFO "):])
        if parsed.scheme == "tls" or tls_ca or info.get("tls_required"):
            context = ssl.create_default_context(cafile=tls_ca)
            if tls_cert:
                context.load_cert_chain(tls_cert, tls_key)
            self.sock = context.wrap_socket(self.sock, server_hostname=parsed.hostname)
        connect = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True,
                   "lang": "python", "version": "0", "protocol": 1, "name": "airlock-consumer"}
        if user_password:
            connect["user"], connect["pass"] = user_password
        if creds:
            connect["jwt"], connect["sig"] = sign_nonce(creds, info.get("nonce", ""))
        self.sock.sendall(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
        self._expect_pong()
        self.inbox = "_INBOX.airlock%d" % os.getpid()
        self.sock.sendall(("SUB %s.* 1\r\n" % self.inbox).encode())
        self.requests = 0

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buffer += chunk

    def _line(self):
        while b"\r\n" not in self.buffer:
            self._fill()
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def _bytes(self, count):
        while len(self.buffer) < count + 2:
            self._fill()
        data, self.buffer = self.buffer[:count], self.buffer[count + 2:]
        return data

    def _expect_pong(self):
        while True:
            line = self._line()
            if line == b"PONG":
                return
            if line.startswith(b"-ERR"):
                raise ConnectionError(line.decode(errors="replace"))

    def publish(self, subject, data, reply=""):
        self.sock.sendall(("PUB %s %s %d\r\n" % (subject, reply, len(data))).encode() + data + b"\r\n")

    def next_message(self, deadline):
        """The next MSG or HMSG: (subject, reply, headers, data); None after the deadline."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.sock.settimeout(remaining)
            try:
                line = self._line()
            except (socket.timeout, TimeoutError):
                return None
            words = line.decode().split(" ")
            if words[0] == "PING":
                self.sock.sendall(b"PONG\r\n")
            elif words[0] == "MSG":
                reply = words[3] if len(words) == 5 else ""
                return words[1], reply, {}, self._bytes(int(words[-1]))
            elif words[0] == "HMSG":
                reply = words[3] if len(words) == 6 else ""
                header_length, total = int(words[-2]), int(words[-1])
                raw = self._bytes(total)
                return words[1], reply, parse_headers(raw[:header_length]), raw[header_length:]
            elif words[0] == "-ERR":
                raise ConnectionError(line.decode(errors="replace"))

    def request(self, subject, body, timeout=5):
        self.requests += 1
        reply = "%s.%d" % (self.inbox, self.requests)
        self.publish(subject, json.dumps(body).encode(), reply)
        deadline = time.monotonic() + timeout
        while True:
            message = self.next_message(deadline)
            if message is None:
                raise TimeoutError("no answer to " + subject)
            if message[0] == reply:
                return json.loads(message[3])

    def flush(self):
        self.sock.settimeout(10)
        self.sock.sendall(b"PING\r\n")
        self._expect_pong()


def sign_nonce(path, nonce):
    """The user JWT of a credentials file and the server's nonce signed with its
    nkey seed (ed25519; needs python3-cryptography)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    blocks = []
    with open(path) as file:
        lines = file.read().splitlines()
    for index, line in enumerate(lines):
        if line.startswith("-----BEGIN") and index + 1 < len(lines):
            blocks.append(lines[index + 1].strip())
    token, seed = blocks[0], blocks[1]
    decoded = base64.b32decode(seed + "=" * (-len(seed) % 8))
    key = Ed25519PrivateKey.from_private_bytes(decoded[2:34])
    return token, base64.urlsafe_b64encode(key.sign(nonce.encode())).decode().rstrip("=")


def parse_headers(raw):
    lines = raw.decode(errors="replace").split("\r\n")
    headers = {"status": lines[0][len("NATS/1.0"):].strip()}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip()] = value.strip()
    return headers


def stream_sequence(reply):
    """The stream sequence from an acknowledgement subject, in either form JetStream uses."""
    tokens = reply.split(".")
    return int(tokens[5]) if len(tokens) == 9 else int(tokens[7])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--stream", required=True)
    parser.add_argument("--durable", default="airlock-consumer")
    parser.add_argument("--subject", default="")
    parser.add_argument("--tls-ca")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--user-password-file")
    parser.add_argument("--creds", help="a NATS credentials file (user JWT and nkey seed)")
    parser.add_argument("--idle-seconds", type=float, default=2)
    parser.add_argument("--info", action="store_true")
    parser.add_argument("--raw", action="store_true", help="print each payload as the text it is, not parsed")
    args = parser.parse_args()
    user_password = None
    if args.user_password_file:
        with open(args.user_password_file) as file:
            user_password = tuple(file.readline().rstrip("\n").split(":", 1))
    nc = Connection(args.server, args.tls_ca, args.tls_cert, args.tls_key, user_password, args.creds)
    if args.info:
        state = nc.request("$JS.API.STREAM.INFO." + args.stream, {})
        if "error" in state:
            sys.exit("stream info: %s" % state["error"])
        print(json.dumps(state["state"]))
        return
    config = {"durable_name": args.durable, "ack_policy": "explicit", "deliver_policy": "all", "ack_wait": 30_000_000_000}
    if args.subject:
        config["filter_subject"] = args.subject
    created = nc.request("$JS.API.CONSUMER.DURABLE.CREATE.%s.%s" % (args.stream, args.durable),
                         {"stream_name": args.stream, "config": config})
    if "error" in created:
        sys.exit("creating the consumer: %s" % created["error"])
    idle_since = time.monotonic()
    while args.idle_seconds == 0 or time.monotonic() - idle_since < args.idle_seconds:
        nc.requests += 1
        reply = "%s.%d" % (nc.inbox, nc.requests)
        # A batch of up to 256, the request ending after a second without messages.
        nc.publish("$JS.API.CONSUMER.MSG.NEXT.%s.%s" % (args.stream, args.durable),
                   json.dumps({"batch": 256, "expires": 1_000_000_000}).encode(), reply)
        deadline = time.monotonic() + 5
        received = 0
        while received < 256:
            message = nc.next_message(deadline)
            if message is None:
                break
            subject, ack, headers, data = message
            if subject == reply:
                # 404 no messages, 408 request expired: this pull is over.
                break
            if not ack.startswith("$JS.ACK."):
                continue
            received += 1
            print(json.dumps({"sequence": stream_sequence(ack), "subject": subject,
                              "msg_id": headers.get("Nats-Msg-Id", ""),
                              "payload": data.decode() if args.raw else json.loads(data)}), flush=True)
            # Acknowledged only once handled: a crash before this line means redelivery.
            nc.publish(ack, b"+ACK")
            idle_since = time.monotonic()
        nc.flush()


if __name__ == "__main__":
    main()
