"""Where a measurement writes: a filesystem made new for each measurement.

Why: on ext4 without a journal (this machine's root filesystem), allocating an
inode skips every inode of its block group freed in the last 60 seconds (360
while that inode-table block is still dirty), reading each one's inode-table
block to see when it was freed. A measurement taken on a filesystem where the
previous one had just deleted its roots and outputs paid for those deletions:
three rounds in a row of `run --once` over 1,000 tiny ZIPs on the root
filesystem gave 255, 199 and 151 drops/s as the deleted inodes piled up, and
keyed memos 224/s, against 560–579/s on a new filesystem. Every measurement,
airlock's and its peer's alike, now starts on a filesystem of its own, so it
pays for its own deletions and nobody else's.

The filesystem is a sparse image in the bench's work directory, loop-mounted.
BENCH_FILESYSTEM names the kind: `ext4` (the default: `mkfs.ext4` as Debian
ships it, journal on, as servers run it) or `xfs` (`mkfs.xfs` defaults, from
xfsprogs). Both journal their metadata, so every fsync and syncfs waits for a
journal commit, as it does on a server: an ext4 made without a journal, as
this machine's root filesystem is, makes each of them nearly free and hides
what a drop's durability costs. BENCH_MKFS overrides the command outright;
BENCH_FS=here measures in the work directory instead (also the fallback when
mounting is not possible, which is reported).
"""
import atexit, os, shlex, shutil, subprocess

FILESYSTEMS = {
    "ext4": ("mkfs.ext4 -q -F", "loop,noinit_itable"),
    "xfs": ("mkfs.xfs -q -f", "loop"),
}
KIND = os.environ.get("BENCH_FILESYSTEM", "ext4")
if KIND not in FILESYSTEMS:
    raise SystemExit(f"BENCH_FILESYSTEM={KIND}: not one of {', '.join(FILESYSTEMS)}")
MKFS = os.environ.get("BENCH_MKFS", FILESYSTEMS[KIND][0])
MOUNT_OPTIONS = FILESYSTEMS[KIND][1]
SIZE = 6 << 30

_scratches = {}


class Scratch:
    def __init__(self, work):
        self.image = os.path.join(work, "scratch.img")
        self.mountpoint = os.path.join(work, "scratch")
        self.problem = None
        self.fresh = os.environ.get("BENCH_FS", "fresh") != "here"
        self.kept = False
        atexit.register(self.close)

    def renew(self):
        """An empty directory on a filesystem no earlier measurement has touched
        (or, measuring here, an emptied directory in the work directory)."""
        if self.fresh:
            try:
                self._remake()
                return self.mountpoint
            except (OSError, subprocess.CalledProcessError) as error:
                self.problem = f"cannot make a new filesystem ({error}); measuring in the work directory"
                self.fresh = False
                self.close()
        shutil.rmtree(self.mountpoint, ignore_errors=True)
        os.makedirs(self.mountpoint)
        return self.mountpoint

    def _remake(self):
        self.close()
        os.makedirs(self.mountpoint, exist_ok=True)
        # Truncating to nothing first leaves a sparse image: the inode tables read
        # as zeros, so mkfs and the kernel need not write them (ext4's noinit_itable).
        with open(self.image, "wb") as f:
            f.truncate(SIZE)
        subprocess.run(shlex.split(MKFS) + [self.image], check=True, capture_output=True)
        subprocess.run(["mount", "-o", MOUNT_OPTIONS, self.image, self.mountpoint], check=True, capture_output=True)

    def close(self):
        # Asked of the kernel rather than remembered: an earlier process (a
        # `--keep` renewal, or one that died) may have left it mounted.
        if not self.kept and os.path.ismount(self.mountpoint):
            subprocess.run(["umount", self.mountpoint], check=False, capture_output=True)

    def describe(self):
        if self.fresh:
            return f"a new filesystem for each measurement (`{MKFS}` on a loop-mounted {SIZE >> 30} GiB sparse image)"
        return self.problem or "the work directory's filesystem (BENCH_FS=here)"


def scratch(work):
    """The one Scratch of this process for `work`."""
    if work not in _scratches:
        _scratches[work] = Scratch(work)
    return _scratches[work]


def fresh_directory(work, name):
    """`name`, created empty on a renewed scratch filesystem."""
    path = os.path.join(scratch(work).renew(), name)
    os.makedirs(path)
    return path


if __name__ == "__main__":
    # scratch.py WORK: says where the measurements will be taken (a trial renewal).
    # scratch.py WORK --keep: renews it and prints the directory, left mounted for
    # a shell script's measurement (the script unmounts WORK/scratch when done).
    import sys
    trial = scratch(sys.argv[1])
    directory = trial.renew()
    if sys.argv[2:] == ["--keep"]:
        trial.kept = True
        print(directory)
    else:
        print(trial.describe())
