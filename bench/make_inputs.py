#!/usr/bin/env python3
"""Generates benchmark inputs (not committed): text-like, moderately compressible data."""
import io, os, random, sys, tarfile, zipfile

def text_like(rng, size):
    words = [''.join(rng.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(rng.randint(2, 9))) for _ in range(4000)]
    out = io.StringIO()
    n = 0
    while n < size:
        line = ' '.join(rng.choice(words) for _ in range(rng.randint(5, 14))) + '\n'
        out.write(line)
        n += len(line)
    return out.getvalue().encode()[:size]

def main(directory):
    os.makedirs(directory, exist_ok=True)
    rng = random.Random(7)
    small = {}
    for i in range(1000):
        path = f"d{i % 10}/e{(i // 10) % 10}/file{i}.txt"
        small[path] = text_like(rng, rng.randint(1024, 8192))
    with zipfile.ZipFile(os.path.join(directory, 'small-files.zip'), 'w', zipfile.ZIP_DEFLATED) as z:
        for path, data in small.items():
            z.writestr(path, data)
    big = {f"big/part{i}.txt": text_like(rng, 18 * 1024 * 1024) for i in range(5)}
    with zipfile.ZipFile(os.path.join(directory, 'large-files.zip'), 'w', zipfile.ZIP_DEFLATED) as z:
        for path, data in big.items():
            z.writestr(path, data)
    with tarfile.open(os.path.join(directory, 'large-files.tar'), 'w', format=tarfile.PAX_FORMAT) as t:
        for path, data in big.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))

if __name__ == '__main__':
    main(sys.argv[1])
