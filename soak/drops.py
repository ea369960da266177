"""The soak's drops: valid and hostile archives made in memory, and the
producers that deliver them into the inbox by rename or by write-and-close."""

import hashlib
import io
import os
import random
import tarfile
import threading
import time
import zipfile

def random_bytes(rng, low, high):
    return rng.randbytes(rng.randint(low, high))


def valid_zip(rng, stem):
    files = {f"{stem}/f{i}.bin": random_bytes(rng, 1, 20000) for i in range(rng.randint(1, 3))}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue(), files


def valid_tgz(rng, stem):
    files = {f"{stem}/t{i}.bin": random_bytes(rng, 1, 20000) for i in range(rng.randint(1, 3))}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.USTAR_FORMAT) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 1_700_000_000
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue(), files


def traversal_zip(rng, stem):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("inside.txt", random_bytes(rng, 1, 2000))
        archive.writestr(zipfile.ZipInfo(f"../escape-{stem}.txt"), b"outside\n")
    return buffer.getvalue(), None


def garbage(rng, stem):
    return b"NOT AN ARCHIVE " + stem.encode() + random_bytes(rng, 0, 5000), None


def truncated_zip(rng, stem):
    data, _ = valid_zip(rng, stem)
    return data[: max(40, len(data) // 2)], None


# kind -> (maker, suffix, expected outcome, expected reason)
KINDS = {
    "valid": (valid_zip, ".zip", "accepted", None),
    "validtgz": (valid_tgz, ".tar.gz", "accepted", None),
    "traversal": (traversal_zip, ".zip", "rejected", "unsafe-path"),
    "garbage": (garbage, ".dat", "rejected", "unsupported-format"),
    "truncated": (truncated_zip, ".zip", "rejected", "corrupt-archive"),
}
WEIGHTS = {"valid": 4, "validtgz": 2, "traversal": 2, "garbage": 1, "truncated": 1}


class Drop:
    def __init__(self, name, stem, kind, data, files, delivery):
        self.name, self.stem, self.kind, self.data, self.files, self.delivery = name, stem, kind, data, files, delivery
        self.sha256 = hashlib.sha256(data).hexdigest()

    @property
    def expected(self):
        return KINDS[self.kind][2]

    @property
    def reason(self):
        return KINDS[self.kind][3]


class Producer(threading.Thread):
    """Drops archives into the inbox until told to stop, each by one of the three ways."""

    def __init__(self, index, inbox, outside, seed, pause, stop, ledger, lock):
        super().__init__(daemon=True)
        self.index, self.inbox, self.outside, self.pause = index, inbox, outside, pause
        self.rng = random.Random(seed)
        self.stop, self.ledger, self.lock = stop, ledger, lock
        self.failure = None

    def run(self):
        try:
            sequence = 0
            kinds = [k for k, w in WEIGHTS.items() for _ in range(w)]
            while not self.stop.is_set():
                sequence += 1
                kind = self.rng.choice(kinds)
                maker, suffix, _, _ = KINDS[kind]
                stem = f"p{self.index}-{sequence:06d}-{kind}"
                data, files = maker(self.rng, stem)
                delivery = self.rng.choice(["rename-in-inbox", "rename-from-outside", "write-and-close"])
                drop = Drop(stem + suffix, stem, kind, data, files, delivery)
                with self.lock:
                    self.ledger.append(drop)
                self.deliver(drop)
                time.sleep(self.rng.uniform(0, self.pause))
        except Exception as error:  # reported as a problem by the main thread
            self.failure = f"producer {self.index}: {error!r}"

    def deliver(self, drop):
        target = os.path.join(self.inbox, drop.name)
        if drop.delivery == "rename-in-inbox":
            temporary = target + ".part"
            with open(temporary, "wb") as handle:
                handle.write(drop.data)
            os.rename(temporary, target)
        elif drop.delivery == "rename-from-outside":
            temporary = os.path.join(self.outside, drop.name)
            with open(temporary, "wb") as handle:
                handle.write(drop.data)
            os.rename(temporary, target)
        else:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                cut = self.rng.randint(0, len(drop.data))
                os.write(fd, drop.data[:cut])
                time.sleep(self.rng.uniform(0, 0.05))
                view = memoryview(drop.data)[cut:]
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
