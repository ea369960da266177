"""Reads a ZIP held in memory with libarchive through ctypes, the way airlock's
decoder child does (C.UTF-8 locale, one format reader, every entry's data read
to its end), so a differential check can compare libarchive with other readers.

    read(data, seekable=True) -> Listing

A Listing holds (raw name, kind, sha256 of the data) per entry in the order
libarchive yields them, or the error that stopped it.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
from dataclasses import dataclass, field

ARCHIVE_EOF, ARCHIVE_OK, ARCHIVE_WARN = 1, 0, -20

_lib = ctypes.CDLL(ctypes.util.find_library("archive") or "libarchive.so.13")
_libc = ctypes.CDLL(None)
_libc.setlocale.restype = ctypes.c_char_p
_libc.setlocale.argtypes = [ctypes.c_int, ctypes.c_char_p]
_LC_CTYPE = 0
_libc.setlocale(_LC_CTYPE, b"C.UTF-8")

_p = ctypes.c_void_p
for name, res, args in [
    ("archive_read_new", _p, []),
    ("archive_read_free", ctypes.c_int, [_p]),
    ("archive_read_support_format_zip_seekable", ctypes.c_int, [_p]),
    ("archive_read_support_format_zip_streamable", ctypes.c_int, [_p]),
    ("archive_read_open_memory", ctypes.c_int, [_p, ctypes.c_char_p, ctypes.c_size_t]),
    ("archive_read_next_header", ctypes.c_int, [_p, ctypes.POINTER(_p)]),
    ("archive_read_data_block", ctypes.c_int,
     [_p, ctypes.POINTER(_p), ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int64)]),
    ("archive_error_string", ctypes.c_char_p, [_p]),
    ("archive_entry_pathname", ctypes.c_char_p, [_p]),
    ("archive_entry_filetype", ctypes.c_uint, [_p]),
]:
    fn = getattr(_lib, name)
    fn.restype, fn.argtypes = res, args


@dataclass
class Listing:
    entries: list[tuple[bytes, str, str]] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _kind(filetype: int) -> str:
    return {0o100000: "file", 0o040000: "dir"}.get(filetype, "other")


def read(data: bytes, seekable: bool = True, max_entries: int = 5000) -> Listing:
    out = Listing()
    a = _lib.archive_read_new()
    try:
        support = (_lib.archive_read_support_format_zip_seekable if seekable
                   else _lib.archive_read_support_format_zip_streamable)
        support(a)
        buf = ctypes.create_string_buffer(data, len(data))
        if _lib.archive_read_open_memory(a, buf, len(data)) != ARCHIVE_OK:
            out.error = "open: " + (_lib.archive_error_string(a) or b"?").decode(errors="replace")
            return out
        entry = _p()
        while len(out.entries) < max_entries:
            r = _lib.archive_read_next_header(a, ctypes.byref(entry))
            if r == ARCHIVE_EOF:
                return out
            if r != ARCHIVE_OK:
                out.error = "header: " + (_lib.archive_error_string(a) or b"?").decode(errors="replace")
                return out
            name = _lib.archive_entry_pathname(entry) or b""
            kind = _kind(_lib.archive_entry_filetype(entry))
            digest = hashlib.sha256()
            block, size, offset = _p(), ctypes.c_size_t(), ctypes.c_int64()
            written = 0
            while True:
                r = _lib.archive_read_data_block(a, ctypes.byref(block), ctypes.byref(size), ctypes.byref(offset))
                if r == ARCHIVE_EOF:
                    break
                if r != ARCHIVE_OK:
                    out.error = "data: " + (_lib.archive_error_string(a) or b"?").decode(errors="replace")
                    return out
                if offset.value > written:
                    digest.update(b"\0" * (offset.value - written))
                    written = offset.value
                digest.update(ctypes.string_at(block, size.value))
                written += size.value
                if written > 64 << 20:
                    out.error = "data: more than 64 MiB"
                    return out
            out.entries.append((name, kind, digest.hexdigest()))
        out.error = "too many entries"
        return out
    finally:
        _lib.archive_read_free(a)
