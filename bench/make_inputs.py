#!/usr/bin/env python3
"""Generates benchmark inputs (not committed): text-like, moderately compressible data."""
import io, os, random, subprocess, sys, tarfile, zipfile

def text_like(rng, size):
    words = [''.join(rng.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(rng.randint(2, 9))) for _ in range(4000)]
    out = io.StringIO()
    n = 0
    while n < size:
        line = ' '.join(rng.choice(words) for _ in range(rng.randint(5, 14))) + '\n'
        out.write(line)
        n += len(line)
    return out.getvalue().encode()[:size]

def make_inputs(work):
    """Writes every benchmark input into WORK/inputs and returns that directory."""
    rng = random.Random(11)
    inputs = os.path.join(work, "inputs")
    os.makedirs(inputs, exist_ok=True)
    big = {f"big/part{i}.txt": text_like(rng, 18 * 1024 * 1024) for i in range(5)}
    with zipfile.ZipFile(os.path.join(inputs, "large.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in big.items():
            z.writestr(name, data)
    with tarfile.open(os.path.join(inputs, "large.tar"), "w", format=tarfile.PAX_FORMAT) as t:
        for name, data in big.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    subprocess.run(["gzip", "-6", "-k", "-f", os.path.join(inputs, "large.tar")], check=True)
    subprocess.run(["zstd", "-q", "-3", "-f", os.path.join(inputs, "large.tar"), "-o", os.path.join(inputs, "large.tar.zst")], check=True)
    with zipfile.ZipFile(os.path.join(inputs, "small.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(1000):
            z.writestr(f"d{i % 10}/e{(i // 10) % 10}/file{i}.txt", text_like(rng, rng.randint(1024, 8192)))
    with zipfile.ZipFile(os.path.join(inputs, "tiny.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("docs/readme.txt", text_like(rng, 3000))
        z.writestr("data/values.csv", text_like(rng, 2000))
    with tarfile.open(os.path.join(inputs, "one-mib.tar"), "w", format=tarfile.PAX_FORMAT) as t:
        data = text_like(rng, 1024 * 1024 - 4096)
        info = tarfile.TarInfo("one/part.txt")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return inputs



if __name__ == '__main__':
    make_inputs(sys.argv[1])
