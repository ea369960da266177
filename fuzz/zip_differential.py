#!/usr/bin/env python3
"""Differential ZIP fuzzer: every archive two readers read differently must be
refused by airlock.

    python3 fuzz/zip_differential.py --seconds 300        # or: make fuzz-zip
    python3 fuzz/zip_differential.py --replay fuzz/zip-findings

Mutates the corpus's ZIPs (fixtures/archives/*.zip) and hands each mutant to four
readers: airlock (`airlock inspect`, the real decoder child), libarchive's seekable
and streaming ZIP readers (through ctypes, as airlock's child configures it), and
Python's zipfile. A reader's view is the list of (name, kind, SHA-256 of the data)
it yields, names compared in NFC (libarchive normalises names flagged UTF-8), or
the error that stopped it. The readers other than airlock disagree when their
views differ or one fails where another succeeds; airlock must then reject. A
mutant airlock accepts while the others disagree, or whose file count differs from
theirs, is a finding: the fuzzer prints it and exits 1.

Mutants on which the readers disagree are kept in --keep (default
fuzz/zip-findings/), one per distinct (airlock reason, disagreement) pair, with
findings.json recording airlock's verdict; make_archives.py turns the kept ones
into fixtures. Not part of `make test`: it runs for as long as it is asked to.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import time
import unicodedata
import warnings
import zipfile
from collections import Counter
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "fixtures"))
import libarchive_zip  # noqa: E402

MAX_ENTRY_BYTES = 64 << 20


def nfc_name(raw: bytes) -> str:
    return unicodedata.normalize("NFC", raw.decode("utf-8", "surrogateescape")).rstrip("/")


def reader_name(raw: bytes, flags: int, extra: bytes) -> bytes:
    """The name a reader such as unzip or libarchive gives a header's raw name, as
    UTF-8: its Unicode Path field's (0x7075) where that field's CRC-32 is that of
    `raw` (APPNOTE 4.6.9); else `raw` itself where it is UTF-8 (flagged or not:
    Finder and Info-ZIP on Linux write UTF-8 without the flag), or read as CP437
    where it is not. Python's zipfile reads neither the field nor unflagged UTF-8."""
    at = 0
    while at + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, at)
        body = extra[at + 4:at + 4 + size]
        if tag == 0x7075 and len(body) >= 5 and body[0] == 1 and struct.unpack_from("<I", body, 1)[0] == zlib.crc32(raw):
            return body[5:]
        at += 4 + size
    try:
        raw.decode("utf-8")
        return raw
    except UnicodeDecodeError:
        return raw if flags & 0x800 else raw.decode("cp437").encode("utf-8")


def local_name(data: bytes, zi: zipfile.ZipInfo) -> tuple[bytes, str] | None:
    """The local header's name as `reader_name` gives it, and as zipfile decodes
    it; None when the header cannot be read."""
    at = zi.header_offset
    if at + 30 > len(data) or data[at:at + 4] != b"PK\x03\x04":
        return None
    flags, = struct.unpack_from("<H", data, at + 6)
    name_length, extra_length = struct.unpack_from("<HH", data, at + 26)
    raw = data[at + 30:at + 30 + name_length]
    extra = data[at + 30 + name_length:at + 30 + name_length + extra_length]
    return reader_name(raw, flags, extra), raw.decode("utf-8" if flags & 0x800 else "cp437", "surrogateescape")


def python_view(data: bytes) -> tuple[list, str | None]:
    out = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                for zi in zf.infolist():
                    encoding = "utf-8" if zi.flag_bits & 0x800 else "cp437"
                    raw = reader_name(zi.filename.encode(encoding, "surrogateescape"), zi.flag_bits, zi.extra)
                    # zipfile compares the local name with the central one as decoded
                    # text; a reader of the Unicode Path field compares what each
                    # field names. Where those agree, zipfile is let read the entry.
                    local = local_name(data, zi)
                    if local is not None and local[0] == raw:
                        zi.orig_filename = local[1]
                    if zi.is_dir():
                        out.append((nfc_name(raw), "dir", hashlib.sha256(b"").hexdigest()))
                        continue
                    if zi.file_size > MAX_ENTRY_BYTES:
                        return out, "entry too large to compare"
                    with zf.open(zi) as f:
                        body = f.read(MAX_ENTRY_BYTES + 1)
                    out.append((nfc_name(raw), "file", hashlib.sha256(body).hexdigest()))
    except Exception as error:  # zipfile raises many types on damaged input
        return out, f"{type(error).__name__}: {error}"[:200]
    return out, None


def libarchive_view(data: bytes, seekable: bool) -> tuple[list, str | None]:
    listing = libarchive_zip.read(data, seekable=seekable)
    return [(nfc_name(n), k, h) for n, k, h in listing.entries], listing.error


def airlock_verdict(binary: str, data: bytes, workdir: str) -> dict:
    path = os.path.join(workdir, "mutant.zip")
    with open(path, "wb") as f:
        f.write(data)
    p = subprocess.run([binary, "inspect", path], capture_output=True, timeout=60)
    # "\n" only: str.splitlines() also splits at U+2028 and U+2029, which JSON
    # leaves unescaped inside a string (a refused name quoted in the verdict).
    lines = p.stdout.decode(errors="replace").strip().split("\n")
    try:
        return json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        return {"verdict": "error", "status": p.returncode, "stderr": p.stderr.decode(errors="replace")[-300:]}


def views(data: bytes) -> dict[str, tuple[list, str | None]]:
    return {"zipfile": python_view(data), "libarchive-seekable": libarchive_view(data, True),
            "libarchive-streaming": libarchive_view(data, False)}


def unsigned_stored_descriptor(data: bytes) -> bool:
    """Whether a stored entry's data descriptor, where the directory ends its data, lacks its signature."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for zi in zf.infolist():
                if zi.flag_bits & 0x08 and zi.compress_type == zipfile.ZIP_STORED:
                    at = zi.header_offset
                    name_length, extra_length = struct.unpack_from("<HH", data, at + 26)
                    end = at + 30 + name_length + extra_length + zi.compress_size
                    if data[end:end + 4] != b"PK\x07\x08":
                        return True
    except (zipfile.BadZipFile, struct.error, ValueError, OSError, EOFError, NotImplementedError):
        return False
    return False


def disagreement(vs: dict[str, tuple[list, str | None]], data: bytes = b"") -> str | None:
    """A short signature of how the readers differ, or None when they agree.

    libarchive's seekable reader never recognises an archive of no entries (its
    search for the end record stops short of byte 0); airlock does not run
    libarchive on one, so that refusal is not counted when the others list nothing.
    A stored entry whose data descriptor has no signature has no end a streaming
    reader can find: it fails ("Truncated ZIP file data") where the others read
    the archive alike, a refusal rather than another reading, and airlock accepts
    such an entry where the directory and the descriptor agree (the signature is
    optional), so that failure alone is not counted either.
    """
    seekable, error = vs["libarchive-seekable"]
    if error == "open: Unrecognized archive format" and all(
            not v and not e for k, (v, e) in vs.items() if k != "libarchive-seekable"):
        return None
    failed = sorted(k for k, (_, e) in vs.items() if e)
    if failed == ["libarchive-streaming"] and vs["zipfile"][0] == vs["libarchive-seekable"][0] \
            and unsigned_stored_descriptor(data):
        # What it yielded before it failed must be the others' entries.
        if Counter(vs["libarchive-streaming"][0]) <= Counter(vs["zipfile"][0]):
            return None
    if failed:
        return "fails:" + ",".join(failed)
    listings = {k: sorted(v) for k, (v, _) in vs.items()}
    first = next(iter(listings.values()))
    differing = sorted(k for k, v in listings.items() if v != first)
    if differing:
        return "differs:" + ",".join(sorted(listings))
    return None


# ------------------------------------------------------------------ mutations

INTERESTING16 = [0, 1, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF]
INTERESTING32 = [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]
SIGNATURES = [b"PK\x01\x02", b"PK\x03\x04", b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07", b"PK\x07\x08"]


def record_offsets(data: bytes) -> list[int]:
    found = []
    for sig in SIGNATURES:
        start = 0
        while (i := data.find(sig, start)) >= 0 and len(found) < 4000:
            found.append(i)
            start = i + 1
    return found


def mutate(data: bytes, rng: random.Random, corpus: list[bytes]) -> bytes:
    d = bytearray(data)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if not d:
            d += b"PK\x05\x06" + bytes(18)
        op = rng.randrange(12)
        offsets = record_offsets(bytes(d)) or [0]
        at = rng.choice(offsets) + rng.randrange(0, 46)
        at = min(at, max(len(d) - 1, 0))
        if op == 0:  # flip a bit anywhere
            i = rng.randrange(len(d))
            d[i] ^= 1 << rng.randrange(8)
        elif op == 1 and at + 2 <= len(d):  # a 16-bit field in a record
            struct.pack_into("<H", d, at, rng.choice(INTERESTING16 + [struct.unpack_from("<H", d, at)[0] + rng.choice([-1, 1]) & 0xFFFF]))
        elif op == 2 and at + 4 <= len(d):  # a 32-bit field in a record
            struct.pack_into("<I", d, at, rng.choice(INTERESTING32 + [len(d), rng.randrange(len(d) + 1)]))
        elif op == 3 and at + 8 <= len(d):  # a 64-bit field
            struct.pack_into("<Q", d, at, rng.choice([0, 2**63 - 1, 2**64 - 1, 2**32, len(d)]))
        elif op == 4:  # insert bytes
            i = rng.randrange(len(d) + 1)
            d[i:i] = rng.choice([b"\0" * rng.randrange(1, 64), os.urandom(rng.randrange(1, 32)), rng.choice(SIGNATURES)])
        elif op == 5 and len(d) > 1:  # delete bytes
            i = rng.randrange(len(d))
            del d[i:i + rng.randrange(1, 32)]
        elif op == 6:  # append junk or a copy of a record
            d += rng.choice([b"\0" * rng.randrange(1, 40), bytes(d[at:at + rng.randrange(4, 80)]), rng.choice(SIGNATURES)])
        elif op == 7:  # truncate
            del d[rng.randrange(len(d)):]
        elif op == 8:  # prepend
            d[0:0] = rng.choice([b"\0" * rng.randrange(1, 600), b"#!/bin/sh\nexit 0\n", bytes(d[at:at + 60])])
        elif op == 9:  # splice another archive's tail (its directory and end record)
            other = rng.choice(corpus)
            d += other[-rng.randrange(22, min(len(other), 400) + 1):]
        elif op == 10 and len(d) >= 22:  # comment length of the last end record
            i = bytes(d).rfind(b"PK\x05\x06")
            if i >= 0 and i + 22 <= len(d):
                struct.pack_into("<H", d, i + 20, rng.choice([0, 1, len(d) - i - 22 + rng.choice([-1, 0, 1]) & 0xFFFF]))
        elif op == 11:  # set a flag bit (descriptor, UTF-8, encryption) in a record
            if at + 2 <= len(d):
                d[at] ^= rng.choice([0x01, 0x08, 0x40])
    return bytes(d)


def crafted(rng: random.Random) -> bytes:
    """A ZIP written by zipcraft with random members and layout quirks: mostly
    archives the readers agree on, near the edges where they stop agreeing."""
    from zipcraft import Member, build, extra, unicode_path
    members = []
    for i in range(rng.randrange(0, 5)):
        base = rng.choice(["a.txt", "dir/b.md", "café.txt", "cafe\u0301.txt", "Résumé/x", "__MACOSX/._a.txt", "z"])
        name = f"{i}-{base}".encode()
        data = rng.choice([b"", b"hello", os.urandom(rng.randrange(1, 3000)), b"A" * rng.randrange(1, 70000)])
        m = Member(name, data, method=rng.choice([0, 8]), utf8=rng.choice([None, False, True]),
                   descriptor=rng.choice([None, None, "sig", "nosig"]), zip64=rng.random() < 0.3,
                   made_by=rng.choice([(3 << 8) | 20, (3 << 8) | 21, 20, (0 << 8) | 63]))
        if rng.random() < 0.1:
            m.extra_central = unicode_path(name, name if rng.random() < 0.5 else name + b"x")
            m.extra_local = m.extra_central
        if rng.random() < 0.05:
            m.extra_central += extra(0x5455, b"\x01\0\0\0\0") * rng.choice([1, 2])
        if rng.random() < 0.05:
            m.descriptor_overrides = {"crc": rng.randrange(2**32)}
        members.append(m)
    zip64_end = rng.random() < 0.3
    options = dict(zip64_end=zip64_end, placeholder_end=zip64_end and rng.random() < 0.5,
                   comment=rng.choice([b"", b"", b"a comment", b"PK\x05\x06" + bytes(18)]))
    if rng.random() < 0.1:
        options["prefix"] = rng.choice([b"\0" * 64, b"#!/bin/sh\n"])
        options["offsets_count_prefix"] = rng.random() < 0.5
    if members and rng.random() < 0.05:
        options["gaps"] = {rng.randrange(len(members)): b"\0" * rng.randrange(1, 40)}
    if rng.random() < 0.05:
        options["trailing"] = b"\0" * rng.randrange(1, 30)
    return build(members, **options)


# ------------------------------------------------------------------ driver

def run(args) -> int:
    binary = str(REPO / ".build/debug/airlock") if not args.airlock else args.airlock
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} not found: run `swift build` first")
    seeds = [p.read_bytes() for p in sorted((REPO / "fixtures/archives").glob("*.zip")) if p.stat().st_size < 200_000]
    keep = Path(args.keep)
    keep.mkdir(parents=True, exist_ok=True)
    index_path = keep / "findings.json"
    kept = json.loads(index_path.read_text()) if index_path.exists() else []
    kept_keys = {(k["reason"], k["disagreement"]) for k in kept}
    rng = random.Random(args.seed)
    deadline = time.monotonic() + args.seconds
    stats = {"inputs": 0, "disagreements": 0, "accepted_despite_disagreement": 0, "kept": 0}
    failures = []
    agreed: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="zipfuzz-") as work:
        while time.monotonic() < deadline:
            made = rng.random() < 0.5
            data = crafted(rng) if made else mutate(rng.choice(seeds), rng, seeds)
            if made and rng.random() < 0.3:
                data = mutate(data, rng, seeds)
            stats["inputs"] += 1
            vs = views(data)
            differ = disagreement(vs, data)
            if differ is None and not made and rng.random() > 0.1:
                continue  # the readers agree on a mutant: airlock is asked on a sample only
            verdict = airlock_verdict(binary, data, work)
            if differ is None:
                files = sum(1 for _, k, _ in vs["zipfile"][0] if k == "file")
                if verdict.get("verdict") == "accepted" and verdict.get("files") != files:
                    failures.append((data, verdict, f"airlock counts {verdict.get('files')} files, the others {files}"))
                # Where the other readers agree, a refusal is airlock being stricter: counted, not a finding.
                outcome = verdict.get("reason") or verdict.get("verdict")
                agreed[outcome] = agreed.get(outcome, 0) + 1
                continue
            stats["disagreements"] += 1
            if verdict.get("verdict") != "rejected":
                stats["accepted_despite_disagreement"] += 1
                failures.append((data, verdict, differ))
                continue
            key = (verdict.get("reason"), differ)
            if key not in kept_keys and len(data) <= 64 * 1024:
                kept_keys.add(key)
                name = "fuzz-" + hashlib.sha256(data).hexdigest()[:16] + ".zip"
                (keep / name).write_bytes(data)
                kept.append({"file": name, "reason": verdict.get("reason"), "detail": verdict.get("detail", ""),
                             "disagreement": differ})
                stats["kept"] += 1
    index_path.write_text(json.dumps(sorted(kept, key=lambda k: k["file"]), indent=2) + "\n")
    for data, verdict, why in failures:
        name = "FAIL-" + hashlib.sha256(data).hexdigest()[:16] + ".zip"
        (keep / name).write_bytes(data)
        print(f"FINDING {name}: airlock {verdict} while {why}")
    print(json.dumps({"seconds": args.seconds, **stats, "findings": len(failures), "verdicts_where_readers_agree": agreed}))
    return 1 if failures else 0


def replay(directory: Path, airlock: str | None) -> int:
    binary = airlock or str(REPO / ".build/debug/airlock")
    bad = 0
    with tempfile.TemporaryDirectory(prefix="zipfuzz-") as work:
        for entry in json.loads((directory / "findings.json").read_text()):
            data = (directory / entry["file"]).read_bytes()
            verdict = airlock_verdict(binary, data, work)
            differ = disagreement(views(data), data)
            # A kept input must still be refused for the same reason. Its readers may have come to
            # agree since it was kept (a streaming reader's refusal of an unsigned stored descriptor
            # is no longer counted): then airlock is only the stricter one, which is said.
            ok = verdict.get("verdict") == "rejected" and verdict.get("reason") == entry["reason"]
            bad += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {entry['file']} {verdict.get('reason')} ({differ or 'readers now agree'})")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", default=str(HERE / "zip-findings"))
    ap.add_argument("--airlock", help="the airlock binary (default .build/debug/airlock)")
    ap.add_argument("--replay", help="re-judge a findings directory instead of fuzzing")
    args = ap.parse_args()
    if args.replay:
        return replay(Path(args.replay), args.airlock)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
