#!/usr/bin/env python3
"""Differential fuzzer for the optional formats: every archive two readers read
differently must be refused by airlock.

    python3 fuzz/formats_differential.py --format rar --seconds 300    # or: make fuzz-rar
    (formats: 7z, rar, iso, cab, cpio)

Mutates the format's fixtures (fixtures/formats/, and for 7z fixtures/archives/)
and archives crafted on the spot (7z by 7-Zip itself, RAR by make_rar.py's writer,
cpio by a small newc/odc writer here), and hands each
mutant to airlock (`airlock inspect` with every format enabled: the real decoder
child), to libarchive (through ctypes, one format reader, as airlock's child
configures it) and to a second reader of the format:

- 7z: 7-Zip (`7z l -slt` and `7z x -so`, and `7z x` into a temporary directory for
  which entries it makes directories: it decides that from the header's
  empty-stream and empty-file vectors, not from the attributes it lists). Most mutants have the start header's and
  the next header's CRCs made right again after the mutation, so that what a
  mutation changes in the header is read rather than refused for its checksum.
- RAR: 7-Zip (`7z l -slt`, and `7z x -so` for the data; Debian's 7-Zip cannot
  decompress RAR, so a compressed entry's data is not compared, only stored ones').
- ISO 9660: 7-Zip, and isoinfo (`isoinfo -l`, Rock Ridge or Joliet names as the
  image has them; names, kinds and sizes).
- CAB: 7-Zip (most mutants have their data checksums zeroed, which means none, so
  that what a mutation changes is read rather than refused).
- cpio: GNU cpio (`cpio -itv` for names, kinds and sizes; `cpio -i --to-stdout`
  for the regular files' data, split by their sizes). Nothing is extracted to disk.

A reader's view is the sorted list of (name in NFC without a trailing '/', kind,
size, SHA-256 of the data) of the entries that are not directories (readers differ
on listing implied directories, which land the same either way), or the error that
stopped it. 7-Zip's `[BOOT]` pseudo-entries of an El Torito image are left out. The
readers disagree when their views differ or one fails where another succeeds;
airlock must then reject. A finding is a mutant airlock accepts although the
readers disagree (or all fail), or whose file count differs from theirs; findings
are kept in --keep (default fuzz/FORMAT-findings/) and make the exit status 1.
Not part of `make test`.
"""
from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import time
import unicodedata
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "fixtures" / "formats"))
import libarchive_zip  # noqa: E402  (the ctypes binding; its setup serves every format)
import make_rar  # noqa: E402

FORMATS = {"7z": ("7z", [".7z"]), "rar": ("rar", [".rar"]), "iso": ("iso9660", [".iso"]), "cab": ("cab", [".cab"]), "cpio": ("cpio", [".cpio"])}
LIMIT = 16 << 20
_lib, _p = libarchive_zip._lib, ctypes.c_void_p
for name, res, args in [
    ("archive_read_support_format_rar", ctypes.c_int, [_p]), ("archive_read_support_format_rar5", ctypes.c_int, [_p]),
    ("archive_read_support_format_iso9660", ctypes.c_int, [_p]), ("archive_read_support_format_cab", ctypes.c_int, [_p]),
    ("archive_read_support_format_cpio", ctypes.c_int, [_p]), ("archive_read_support_format_7zip", ctypes.c_int, [_p]), ("archive_entry_size", ctypes.c_int64, [_p]),
    ("archive_entry_symlink", ctypes.c_char_p, [_p]), ("archive_entry_hardlink", ctypes.c_char_p, [_p]),
]:
    getattr(_lib, name).restype, getattr(_lib, name).argtypes = res, args


def nfc(name: str) -> str:
    return unicodedata.normalize("NFC", name).rstrip("/")


def view(entries: list[tuple[str, str, int, str]]) -> list:
    return sorted((nfc(n), k, s, h) for n, k, s, h in entries if k != "dir" and nfc(n) not in ("", "."))


# ------------------------------------------------------------------ readers

def libarchive_view(data: bytes, fmt: str) -> tuple[list, str | None]:
    a = _lib.archive_read_new()
    out = []
    try:
        for reader in {"7z": ["7zip"], "rar": ["rar", "rar5"], "iso": ["iso9660"], "cab": ["cab"], "cpio": ["cpio"]}[fmt]:
            getattr(_lib, f"archive_read_support_format_{reader}")(a)
        buf = ctypes.create_string_buffer(data, len(data))
        if _lib.archive_read_open_memory(a, buf, len(data)) != 0:
            return out, "open: " + (_lib.archive_error_string(a) or b"?").decode(errors="replace")
        entry = _p()
        while len(out) < 5000:
            r = _lib.archive_read_next_header(a, ctypes.byref(entry))
            if r == 1:
                return view(out), None
            if r != 0:
                return view(out), "header: " + (_lib.archive_error_string(a) or b"?").decode(errors="replace")
            name = (_lib.archive_entry_pathname(entry) or b"").decode("utf-8", "surrogateescape")
            filetype = _lib.archive_entry_filetype(entry)
            linked = _lib.archive_entry_symlink(entry) or _lib.archive_entry_hardlink(entry)
            kind = "link" if linked else {0o100000: "file", 0o040000: "dir"}.get(filetype, "other")
            digest, written = hashlib.sha256(), 0
            block, size, offset = _p(), ctypes.c_size_t(), ctypes.c_int64()
            while kind == "file":
                r = _lib.archive_read_data_block(a, ctypes.byref(block), ctypes.byref(size), ctypes.byref(offset))
                if r == 1:
                    break
                if r != 0:
                    return view(out), "data: " + (_lib.archive_error_string(a) or b"?").decode(errors="replace")
                if offset.value > written:
                    digest.update(b"\0" * (offset.value - written))
                    written = offset.value
                digest.update(ctypes.string_at(block, size.value))
                written += size.value
                if written > LIMIT:
                    return view(out), "data: too large to compare"
            out.append((name, kind, written if kind == "file" else 0, digest.hexdigest() if kind == "file" else ""))
        return view(out), "too many entries"
    finally:
        _lib.archive_read_free(a)


def tool(arguments: list[str], data: bytes | None = None, timeout=30) -> subprocess.CompletedProcess:
    return subprocess.run(arguments, input=data, capture_output=True, timeout=timeout)


def sevenzip_view(path: str, stored_only: bool, extract: bool = False) -> tuple[list, str | None]:
    """7-Zip's view. With `extract` (7z), which entries are directories is what
    7-Zip makes of them on disk: its 7z reader takes that from the header's
    empty-stream and empty-file vectors, and the attributes it lists are the
    header's attribute field as it stands, which need not agree."""
    listed = tool(["7z", "l", "-slt", "-ba", path])
    if listed.returncode != 0 or b"ERROR" in listed.stdout + listed.stderr:
        return [], "7z l: " + (listed.stdout + listed.stderr).decode(errors="replace").strip()[-160:]
    directories = None
    if extract:
        with tempfile.TemporaryDirectory(prefix="7z-out-") as out:
            done = tool(["7z", "x", "-y", "-bd", "-o" + out, path])
            if done.returncode != 0:
                return [], "7z x: " + (done.stdout + done.stderr).decode(errors="replace").strip()[-160:]
            directories = {os.path.relpath(os.path.join(top, d), out) for top, dirs, _ in os.walk(out) for d in dirs}
    items, current = [], {}
    for line in listed.stdout.decode("utf-8", "surrogateescape").splitlines() + [""]:
        if not line.strip():
            if current.get("Path") is not None:
                items.append(current)
            current = {}
        elif " = " in line:
            key, value = line.split(" = ", 1)
            current[key] = value
    entries, files = [], []
    for item in items:
        name = item["Path"].replace("\\", "/")
        folder = item.get("Folder") == "+" or "D" in item.get("Attributes", "")[:1]
        if directories is not None:  # 7z: what 7-Zip made of it on disk
            folder = item["Path"].rstrip("/") in directories
        kind = "dir" if folder else ("link" if item.get("Symbolic Link") or item.get("Hard Link") else "file")
        size = int(item.get("Size") or 0)
        entries.append([name, kind, size if kind == "file" else 0, ""])
        if kind == "file":
            files.append(len(entries) - 1)
    method_ok = all(item.get("Method", "Store") in ("", "Store", "Copy") for item in items)
    if files and (method_ok or not stored_only):
        extracted = tool(["7z", "x", "-so", "-ba", path])
        if extracted.returncode != 0:
            return view(without_boot(entries)), "7z x: " + extracted.stderr.decode(errors="replace").strip()[-160:]
        blob, at = extracted.stdout, 0
        for index in files:
            size = entries[index][2]
            entries[index][3] = hashlib.sha256(blob[at:at + size]).hexdigest()
            at += size
        if at != len(blob):
            return view(without_boot(entries)), f"7z x: {len(blob)} bytes of data for {at} listed"
    elif files:
        # RAR compressed entries: no data to compare, so none is compared for any reader.
        return [(n, k, s, "-") for n, k, s, _ in view(without_boot(entries))], None
    return view(without_boot(entries)), None


def without_boot(entries: list) -> list:
    """7-Zip lists an El Torito image's boot images as [BOOT]/...: no file of the tree."""
    return [e for e in entries if not e[0].startswith("[BOOT]")]


ISO_LINE = re.compile(r"^([-dlcbps])[-rwxsStT]{9}\s+-?\d+\s+-?\d+\s+-?\d+\s+(\d+)\s+\w{3}\s+\d+\s+\d+\s+\[\s*\d+\s+\d+\]\s\s(.*?) ?$")


def isoinfo_view(path: str) -> tuple[list, str | None]:
    info = tool(["isoinfo", "-d", "-i", path])
    if info.returncode != 0:
        return [], "isoinfo -d: " + info.stderr.decode(errors="replace").strip()[-160:]
    text = info.stdout.decode(errors="replace")
    mode = ["-R"] if "Rock Ridge signatures" in text else (["-J"] if "Joliet with UCS level" in text else [])
    listed = tool(["isoinfo", "-l", *mode, "-i", path])
    if listed.returncode != 0 or listed.stderr.strip():
        return [], "isoinfo -l: " + listed.stderr.decode(errors="replace").strip()[-160:]
    entries, directory = [], "/"
    for line in listed.stdout.decode("utf-8", "surrogateescape").splitlines():
        if line.startswith("Directory listing of "):
            directory = line[len("Directory listing of "):]
            continue
        match = ISO_LINE.match(line)
        if not match or match.group(3) in (".", ".."):
            continue
        name = match.group(3) if mode else re.sub(r";1$", "", match.group(3))
        kind = {"d": "dir", "-": "file", "l": "link"}.get(match.group(1), "other")
        entries.append(((directory + name).lstrip("/"), kind, int(match.group(2)) if kind == "file" else 0, ""))
    return view(entries), None


CPIO_LINE = re.compile(r"^([-dlcbps])[-rwxsStT]{9}\s+\d+\s+\S+\s+\S+\s+(\d+)(?:,\s+\d+)?\s+\w{3}\s+\d+\s+[\d:]+\s(.*)$")


def cpio_view(data: bytes) -> tuple[list, str | None]:
    listed = tool(["cpio", "-itv", "--quiet"], data)
    if listed.returncode != 0:
        return [], "cpio -t: " + listed.stderr.decode(errors="replace").strip()[-160:]
    entries = []
    for line in listed.stdout.decode("utf-8", "surrogateescape").splitlines():
        match = CPIO_LINE.match(line)
        if not match:
            return view(entries), f"cpio -t: unparsed line {line[:80]!r}"
        kind = {"d": "dir", "-": "file", "l": "link"}.get(match.group(1), "other")
        name = match.group(3).split(" -> ")[0] if kind == "link" else match.group(3)
        entries.append([name, kind, int(match.group(2)) if kind == "file" else 0, ""])
    extracted = tool(["cpio", "-i", "--to-stdout", "--quiet"], data)
    if extracted.returncode != 0:
        return view(entries), "cpio -i: " + extracted.stderr.decode(errors="replace").strip()[-160:]
    at = 0
    for entry in entries:
        if entry[1] == "file":
            entry[3] = hashlib.sha256(extracted.stdout[at:at + entry[2]]).hexdigest()
            at += entry[2]
    if at != len(extracted.stdout):
        return view(entries), f"cpio -i: {len(extracted.stdout)} bytes of data for {at} listed"
    return view(entries), None


def views(fmt: str, data: bytes, path: str) -> dict[str, tuple[list, str | None]]:
    vs = {"libarchive": libarchive_view(data, fmt)}
    if fmt == "cpio":
        vs["cpio"] = cpio_view(data)
    else:
        vs["7z"] = sevenzip_view(path, stored_only=fmt == "rar", extract=fmt == "7z")
    if fmt == "iso":
        vs["isoinfo"] = isoinfo_view(path)
    if fmt == "rar" and vs["7z"][0] and all(h == "-" for *_, h in vs["7z"][0]):
        vs["libarchive"] = ([(n, k, s, "-") for n, k, s, _ in vs["libarchive"][0]], vs["libarchive"][1])
    return vs


def disagreement(fmt: str, vs: dict) -> str | None:
    failed = sorted(k for k, (_, e) in vs.items() if e)
    if failed and len(failed) < len(vs):
        return "fails:" + ",".join(failed)
    if failed:
        return None
    compared = dict(vs)
    if "isoinfo" in compared:  # names, kinds and sizes only
        listings = {k: [(n, kind, s) for n, kind, s, _ in v] for k, (v, _) in compared.items()}
        if len({json.dumps(v) for v in listings.values()}) > 1:
            return "differs:" + ",".join(sorted(k for k, v in listings.items() if v != listings["libarchive"]))
        del compared["isoinfo"]
    listings = {k: v for k, (v, _) in compared.items()}
    differing = sorted(k for k, v in listings.items() if v != listings["libarchive"])
    return "differs:libarchive," + ",".join(differing) if differing else None


# ------------------------------------------------------------------ inputs

def mutate(data: bytes, rng: random.Random, corpus: list[bytes], fmt: str) -> bytes:
    d = bytearray(data)
    markers = {"7z": [b"7z\xbc\xaf", b"d\0a\0t\0a\0", b"\x01\x04\x06", b"\x0b", b"\x0c", b"\x0a", b"\x11\x00", b"\x0e", b"\x0f",
                      b"\x19", b"\x14", b"\x15"],
               "rar": [b"Rar!", b"readme", b"data.bin", b"docs"], "iso": [b"CD001", b"NM", b"PX", b"SL", b"DATA", b"data"],
               "cab": [b"MSCF", b"data.bin", b"docs"], "cpio": [b"070701", b"070707", b"TRAILER!!!", b"data.bin"]}[fmt]
    for _ in range(rng.choice([1, 1, 2, 3])):
        if not d:
            return bytes(corpus[0])
        spots = [i for m in markers for i in [bytes(d).find(m, rng.randrange(len(d)))] if i >= 0]
        at = min((rng.choice(spots) + rng.randrange(-16, 48)) if spots and rng.random() < 0.7 else rng.randrange(len(d)),
                 len(d) - 1)
        at = max(at, 0)
        op = rng.randrange(9)
        if op == 0:
            d[at] ^= 1 << rng.randrange(8)
        elif op == 1:
            d[at] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, 0x2F, 0x5C, 0x2E, ord("0"), ord("9"), ord("F")])
        elif op == 2 and at + 4 <= len(d):
            struct.pack_into("<I", d, at, rng.choice([0, 1, 0xFFFFFFFF, len(d), rng.randrange(len(d) + 1)]))
        elif op == 3:
            d[at:at] = rng.choice([bytes(rng.randrange(1, 64)), os.urandom(rng.randrange(1, 32)), bytes(d[at:at + 40])])
        elif op == 4 and len(d) > 1:
            del d[at:at + rng.randrange(1, 32)]
        elif op == 5:
            d += rng.choice([bytes(rng.randrange(1, 600)), os.urandom(rng.randrange(1, 40)), rng.choice(corpus)[:200]])
        elif op == 6:
            del d[rng.randrange(len(d)):]
        elif op == 7:
            other = rng.choice(corpus)
            start = rng.randrange(len(other))
            d[at:at + rng.randrange(1, 64)] = other[start:start + rng.randrange(1, 64)]
        elif op == 8 and fmt == "cpio" and at + 8 <= len(d):
            d[at:at + 8] = b"%08X" % rng.choice([0, 1, 11, 4096, len(d), rng.randrange(1 << 16)])
    return bytes(d)


def cab_without_checksums(data: bytes) -> bytes:
    """DATA with every CFDATA checksum zeroed, which means "none" to every reader, so that a
    mutation of the data or of a header field behind it is read rather than refused."""
    d = bytearray(data)
    try:
        reserve = struct.unpack_from("<HBB", d, 36) if struct.unpack_from("<H", d, 30)[0] & 4 else (0, 0, 0)
        folder = 36 + (4 + reserve[0] if reserve != (0, 0, 0) else 0)
        for index in range(struct.unpack_from("<H", d, 26)[0]):
            at, blocks = struct.unpack_from("<IH", d, folder + index * (8 + reserve[1]))
            for _ in range(blocks):
                struct.pack_into("<I", d, at, 0)
                at += 8 + reserve[2] + struct.unpack_from("<H", d, at + 4)[0]
    except struct.error:
        pass
    return bytes(d)


SEVENZIP_SIGNATURE = b"7z\xbc\xaf\x27\x1c"


def sevenzip_header_range(data: bytes) -> tuple[int, int] | None:
    """Where the next header (the archive's header, packed or plain) lies, as the
    start header says, if that is inside DATA."""
    if len(data) < 32 or not data.startswith(SEVENZIP_SIGNATURE):
        return None
    offset, size = struct.unpack_from("<QQ", data, 12)
    start = 32 + offset
    return (start, size) if size and start + size <= len(data) else None


def sevenzip_checksums_repaired(data: bytes) -> bytes:
    """DATA with the next header's CRC and the start header's CRC made right again, so
    that a mutation of the header is read rather than refused for its checksum."""
    d = bytearray(data)
    where = sevenzip_header_range(data)
    if where:
        start, size = where
        struct.pack_into("<I", d, 28, zlib.crc32(d[start:start + size]))
    if len(d) >= 32 and data.startswith(SEVENZIP_SIGNATURE):
        struct.pack_into("<I", d, 8, zlib.crc32(d[12:32]))
    return bytes(d)


def sevenzip_header_mutant(data: bytes, rng: random.Random) -> bytes:
    """One to three small changes inside the next header: property ids, counts,
    sizes, flags and names all live there in a plain (uncompressed) header."""
    where = sevenzip_header_range(data)
    if not where:
        return data
    start, size = where
    d = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 3])):
        at = start + rng.randrange(size)
        op = rng.randrange(5)
        if op == 0:
            d[at] ^= 1 << rng.randrange(8)
        elif op == 1:
            d[at] = rng.choice([0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0x2F, 0x5C, 0x2E, 0x0E, 0x0F, 0x11, 0x19, 0x14, 0x15, 0x18])
        elif op == 2:
            d[at] = (d[at] + rng.choice([-2, -1, 1, 2])) & 0xFF
        elif op == 3 and at + 2 <= start + size:
            d[at:at + 2] = rng.choice([b"\0\0", b"/\0", b".\0", b"\\\0", "\u0301".encode("utf-16-le")])
        else:
            other = rng.randrange(start, start + size)
            d[at], d[other] = d[other], d[at]
    return bytes(d)


def crafted_7z(rng: random.Random, work: str) -> bytes:
    """An archive 7-Zip writes from a few files, empty files and directories, with a
    random method, solid or not, and most often a plain header."""
    folder = Path(tempfile.mkdtemp(dir=work))
    names = ["a.txt", "docs/b.txt", "docs/empty", "caf\u00e9.txt", "e\u0301.txt", "dir/", "run.sh", "x/y/z.bin"]
    for name in rng.sample(names, rng.randrange(1, 5)):
        target = folder / "in" / name
        if name.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(rng.choice([b"", b"hello\n", os.urandom(rng.randrange(1, 700)), b"ab" * rng.randrange(1, 3000)]))
    method = rng.choice(["Copy", "LZMA", "LZMA2", "PPMd", "BZip2", "Deflate", "Copy"])
    arguments = ["7z", "a", "-bd", "-y", f"-m0={method}", rng.choice(["-ms=on", "-ms=off"]),
                 "-mhc=off" if rng.random() < 0.8 else "-mhc=on", str(folder / "out.7z"), "."]
    if rng.random() < 0.3:
        arguments.insert(4, rng.choice(["-mtc=on", "-mta=on", "-mtm=off", "-mhe=off"]))
    done = subprocess.run(arguments, cwd=folder / "in", capture_output=True, timeout=30)
    data = (folder / "out.7z").read_bytes() if done.returncode == 0 else b""
    subprocess.run(["rm", "-rf", str(folder)])
    return data


def crafted_rar(rng: random.Random) -> bytes:
    names = [b"a.txt", b"docs/b.txt", b"docs\\c.txt", b"../x", "caf\u00e9.txt".encode(), b"run.sh", b"dir"]
    if rng.random() < 0.5:
        files = []
        for _ in range(rng.randrange(0, 4)):
            data = rng.choice([b"", b"hello\n", os.urandom(rng.randrange(1, 500))])
            extra = b""
            if rng.random() < 0.3:
                record = rng.choice([vint_record(3, make_rar.vint(1) + struct.pack("<I", 0)),
                                     vint_record(2, make_rar.vint(0) + os.urandom(32)),
                                     vint_record(rng.choice([7, 9]), b"xx"), make_rar.rar5_redirection(1, b"target")])
                extra = record + (rng.choice([b"", record]) if rng.random() < 0.2 else b"")
            files.append(make_rar.rar5_file(rng.choice(names), data, directory=rng.random() < 0.1, extra=extra,
                                            unix_mode=rng.choice([None, 0o100644, 0o120777])))
        archive = make_rar.rar5_archive(files)
        if rng.random() < 0.3:  # a locator record, sometimes running on
            tail = rng.choice([b"", bytes(4), files[0] if files else b""])
            main = make_rar.rar5_main_with_locator(tail)
            start = len(make_rar.RAR5_SIGNATURE)
            old = make_rar.rar5_block(1, 0, make_rar.vint(0))
            archive = archive[:start] + main + archive[start + len(old):]
        return archive
    files = [make_rar.rar4_file(rng.choice(names), rng.choice([b"", b"hello\n", os.urandom(rng.randrange(1, 500))]),
                                directory=rng.random() < 0.1, unix_mode=rng.choice([None, 0o100644]))
             for _ in range(rng.randrange(0, 4))]
    return make_rar.rar4_archive(files, archive_flags=rng.choice([0, 0, 0x8000]))


def vint_record(kind: int, body: bytes) -> bytes:
    record = make_rar.vint(kind) + body
    return make_rar.vint(len(record)) + record


def crafted_cpio(rng: random.Random) -> bytes:
    newc = rng.random() < 0.6
    out = bytearray()
    names = [b"a.txt", b"docs", b"docs/b.txt", b"../x", b"TRAILER!!!", b"./c", "caf\u00e9".encode()]
    entries = [(rng.choice(names), rng.choice([0o100644, 0o040755, 0o120777]),
                rng.choice([b"", b"hi\n", os.urandom(rng.randrange(1, 300))])) for _ in range(rng.randrange(0, 4))]
    for name, mode, data in entries + [(b"TRAILER!!!", 0, b"")]:
        data = b"" if mode == 0o040755 else data
        if newc:
            header = b"070701" + b"".join(b"%08X" % v for v in (1, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0))
            out += header + name + b"\0"
            out += bytes(-len(out) % 4) + data
            out += bytes(-len(out) % 4)
        else:
            out += (b"070707" + b"%06o%06o%06o%06o%06o%06o%06o%011o%06o%011o" % (0, 1, mode, 0, 0, 1, 0, 0, len(name) + 1, len(data))
                    + name + b"\0" + data)
    block = rng.choice([512, 512, 8192, 5120, 1])
    out += bytes(-len(out) % block)
    if rng.random() < 0.1:
        out += rng.choice([b"070701", os.urandom(8), bytes(out)])
    return bytes(out)


# ------------------------------------------------------------------ driver

def airlock_verdict(binary: str, root: str, path: str) -> dict:
    p = subprocess.run([binary, "inspect", path, "--root", root], capture_output=True, timeout=120)
    # "\n" only: str.splitlines() also splits at U+2028 and U+2029, which JSON
    # leaves unescaped inside a string (a refused name quoted in the verdict).
    lines = p.stdout.decode(errors="replace").strip().split("\n")
    try:
        return json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        return {"verdict": "error", "status": p.returncode, "stderr": p.stderr.decode(errors="replace")[-300:]}


def make_root(binary: str, work: str) -> str:
    root = os.path.join(work, "root")
    subprocess.run([binary, "init", "--root", root], check=True, capture_output=True)
    config = Path(root, "airlock.json")
    settings = json.loads(config.read_text())
    settings["formats"] = ["zip", "tar", "7z", "keyed", "rar", "iso9660", "cab", "cpio"]
    config.write_text(json.dumps(settings))
    return root


def run(args) -> int:
    fmt = args.format
    binary = args.airlock or str(REPO / ".build/debug/airlock")
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} not found: run `swift build` first")
    folders = [REPO / "fixtures/formats"] + ([REPO / "fixtures/archives"] if fmt == "7z" else [])
    seeds = [p.read_bytes() for folder in folders for p in sorted(folder.iterdir())
             if p.suffix in FORMATS[fmt][1] and p.stat().st_size < 2_000_000]
    keep = Path(args.keep or HERE / f"{fmt}-findings")
    rng = random.Random(args.seed)
    deadline = time.monotonic() + args.seconds
    stats = {"format": fmt, "seconds": args.seconds, "inputs": 0, "disagreements": 0,
             "accepted_despite_disagreement": 0, "agreements": 0, "all_readers_fail": 0, "accepted_though_all_fail": 0}
    failures, reasons, kinds = [], {}, {}
    with tempfile.TemporaryDirectory(prefix=f"{fmt}fuzz-") as work:
        root = make_root(binary, work)
        path = os.path.join(work, "mutant" + FORMATS[fmt][1][0])
        if fmt == "7z":  # 7-Zip's own archives of every method, most with a plain header to mutate
            seeds += [a for a in (crafted_7z(rng, work) for _ in range(40)) if a]
        while time.monotonic() < deadline:
            craft = {"rar": crafted_rar, "cpio": crafted_cpio, "7z": lambda rng: crafted_7z(rng, work)}.get(fmt)
            if craft and rng.random() < (0.1 if fmt == "7z" else 0.4):
                data = craft(rng)
                if rng.random() < 0.3:
                    data = mutate(data, rng, seeds, fmt)
            else:
                data = mutate(rng.choice(seeds), rng, seeds, fmt)
            if fmt == "cab" and rng.random() < 0.7:
                data = cab_without_checksums(data)
            if fmt == "7z":
                if rng.random() < 0.6:
                    data = sevenzip_header_mutant(rng.choice(seeds), rng)
                if rng.random() < 0.8:
                    data = sevenzip_checksums_repaired(data)
            Path(path).write_bytes(data)
            stats["inputs"] += 1
            try:
                vs = views(fmt, data, path)
            except subprocess.TimeoutExpired:
                continue
            differ = disagreement(fmt, vs)
            all_failed = all(e for _, e in vs.values())
            verdict = airlock_verdict(binary, root, path)
            outcome = verdict.get("reason") or verdict.get("verdict")
            if verdict.get("verdict") == "error":  # no verdict at all: kept to look at, not a finding
                keep.mkdir(parents=True, exist_ok=True)
                (keep / ("ERROR-" + hashlib.sha256(data).hexdigest()[:16] + FORMATS[fmt][1][0])).write_bytes(data)
                print(f"NO VERDICT: {json.dumps(verdict)}")
            if differ is None and not all_failed:
                stats["agreements"] += 1
                files = sum(1 for _, k, _, _ in vs["libarchive"][0] if k == "file")
                if verdict.get("verdict") == "accepted" and verdict.get("files") != files:
                    failures.append((data, verdict, f"airlock counts {verdict.get('files')} files, the readers {files}"))
                reasons[outcome] = reasons.get(outcome, 0) + 1
                continue
            if differ is None:
                stats["all_readers_fail"] += 1
                if verdict.get("verdict") != "rejected":
                    stats["accepted_though_all_fail"] += 1
                    failures.append((data, verdict, "every reader fails"))
                continue
            stats["disagreements"] += 1
            kinds[differ] = kinds.get(differ, 0) + 1
            if verdict.get("verdict") != "rejected":
                stats["accepted_despite_disagreement"] += 1
                failures.append((data, verdict, differ))
    if failures:
        keep.mkdir(parents=True, exist_ok=True)
    for data, verdict, why in failures:
        name = "FAIL-" + hashlib.sha256(data).hexdigest()[:16] + FORMATS[fmt][1][0]
        (keep / name).write_bytes(data)
        print(f"FINDING {name}: airlock {json.dumps(verdict)} while {why}")
    print(json.dumps({**stats, "findings": len(failures), "disagreement_kinds": kinds,
                      "verdicts_where_readers_agree": reasons}))
    return 1 if failures else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--format", choices=sorted(FORMATS), required=True)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", help="where findings are kept (default fuzz/FORMAT-findings/)")
    ap.add_argument("--airlock", help="the airlock binary (default .build/debug/airlock)")
    return run(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())
