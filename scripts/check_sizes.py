#!/usr/bin/env python3
"""make check-sizes: no Swift source file over 400 lines and no function, initialiser or
accessor body over 60, so that every file and function stays small enough to change
safely. Function bodies are found by matching braces after each declaration (string
literals and line comments ignored), which is exact for the code style used here.

Usage: check_sizes.py [DIR ...]   (default: Sources)
"""
import os
import re
import sys

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
DECLARATION = re.compile(r'\b(func\s+[^\s(<]+|init[?!]?\s*[(<]|deinit\b|(get|set)\s*\{)')
STRING = re.compile(r'"(\\.|[^"\\])*"')


def body_length(lines, start):
    """Lines from the declaration to its closing brace, or None if it has no body."""
    depth, opened = 0, False
    for index in range(start, len(lines)):
        code = STRING.sub('""', lines[index]).split('//')[0]
        for character in code:
            if character == '{':
                depth, opened = depth + 1, True
            elif character == '}':
                depth -= 1
        if opened and depth <= 0:
            return index - start + 1
        if not opened and index > start + 8:
            return None
    return None


def main():
    roots = sys.argv[1:] or ['Sources']
    problems = []
    for root in roots:
        for directory, _, files in os.walk(root):
            for name in sorted(files):
                if not name.endswith('.swift'):
                    continue
                path = os.path.join(directory, name)
                with open(path, encoding='utf-8') as handle:
                    lines = handle.read().split('\n')
                if len(lines) - 1 > MAX_FILE_LINES:
                    problems.append(f'{path}: {len(lines) - 1} lines (at most {MAX_FILE_LINES})')
                for number, line in enumerate(lines):
                    if line.lstrip().startswith('//') or not DECLARATION.search(line):
                        continue
                    length = body_length(lines, number)
                    if length and length > MAX_FUNCTION_LINES:
                        problems.append(f'{path}:{number + 1}: {length}-line body (at most {MAX_FUNCTION_LINES}): {line.strip()[:70]}')
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f'check-sizes: {len(problems)} over the limits', file=sys.stderr)
        return 1
    print(f'check-sizes: no file over {MAX_FILE_LINES} lines, no function over {MAX_FUNCTION_LINES} ({", ".join(roots)})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
