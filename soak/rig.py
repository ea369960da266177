"""What every soak does before its chaos: find the airlock it runs, become a
child subreaper (so decoders orphaned by a SIGKILLed daemon stay visible and are
reaped here), make a scratch directory and lay out a root in it. Standard library
only."""

import ctypes
import os
import subprocess
import sys
import tempfile

PR_SET_CHILD_SUBREAPER = 36


def prepare(tool, airlock, prefix):
    """The airlock executable's absolute path and a new scratch directory; None
    (after saying why on standard error, as `tool`) when the soak cannot run."""
    airlock = os.path.abspath(airlock)
    if not os.access(airlock, os.X_OK):
        print(f"{tool}: {airlock} is not an executable", file=sys.stderr)
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print(f"{tool}: cannot become a child subreaper; orphaned decoders would go unseen", file=sys.stderr)
        return None
    return airlock, tempfile.mkdtemp(prefix=f"{prefix}.")


def initialise(tool, airlock, root):
    """`airlock init --root ROOT`; False (said on standard error) when it fails."""
    made = subprocess.run([airlock, "init", "--root", root], capture_output=True, text=True)
    if made.returncode != 0:
        print(f"{tool}: airlock init failed: {made.stderr}", file=sys.stderr)
        return False
    return True
