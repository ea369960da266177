#!/usr/bin/env python3
"""Fails if a Swift file imports a target of this package that its own target does
not name as a dependency in Package.swift, or if a target names a dependency
that none of its files imports (a system library named there is linked into
every program above it, used or not).

The compiler accepts such an import whenever the module is reachable through
another dependency, and SwiftPM's --explicit-target-dependency-import-check
accepts it too (it checks against the transitive closure). Then the graph in
Package.swift no longer says what a target uses, and moving a target breaks
files far from the change. Modules that are not targets of this package (Glibc,
Foundation, Dispatch, Synchronization, Testing) are the toolchain's and not
checked. Package.swift is read through `swift package dump-package`, so what
is checked is what SwiftPM itself reads.
"""
import json
import os
import re
import subprocess
import sys

IMPORT = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+"
    r"(?:(?:struct|class|enum|protocol|typealias|func|var|let)\s+)?(\w+)"
)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    swift = os.environ.get("SWIFT", "swift")
    dump = subprocess.run([swift, "package", "dump-package"], cwd=root, check=True, capture_output=True, text=True)
    package = json.loads(dump.stdout)
    targets = {target["name"]: target for target in package["targets"]}
    problems = []
    for name, target in sorted(targets.items()):
        declared = set()
        for dependency in target.get("dependencies", []):
            for kind in ("byName", "target", "product"):
                if kind in dependency:
                    declared.add(dependency[kind][0])
        default = "Tests" if target["type"] == "test" else "Sources"
        directory = os.path.join(root, target.get("path") or os.path.join(default, name))
        if not os.path.isdir(directory):
            continue
        imported = set()
        for base, _, files in os.walk(directory):
            for file in sorted(files):
                if not file.endswith(".swift"):
                    continue
                path = os.path.join(base, file)
                with open(path, encoding="utf-8") as source:
                    for number, line in enumerate(source, 1):
                        match = IMPORT.match(line)
                        if not match:
                            continue
                        module = match.group(1)
                        imported.add(module)
                        if module in targets and module != name and module not in declared:
                            problems.append(f"{os.path.relpath(path, root)}:{number}: imports {module}, "
                                            f"which target {name} does not list in Package.swift")
        has_swift = any(f.endswith(".swift") for _, _, files in os.walk(directory) for f in files)
        for unused in sorted(declared - imported) if has_swift else []:
            problems.append(f"{os.path.relpath(directory, root)}: target {name} lists {unused} in Package.swift, "
                            f"but none of its files imports it")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check-imports: {len(problems)} import(s) and dependencies disagree", file=sys.stderr)
        return 1
    print(f"check-imports: every target imports exactly the targets Package.swift lists ({len(targets)} targets)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
