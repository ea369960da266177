#ifndef AIRLOCK_MARKUP_H
#define AIRLOCK_MARKUP_H
// The first sieve of the content classes' markup search, sixteen bytes at a
// time where the processor has SSE2: Swift's SIMD types compile to one lane
// at a time here, which is slower than the plain loop they would replace.

#include <stddef.h>

/// The first position in [from, to) of `bytes` (of which `count` may be read)
/// where active markup may start: `<` before an ASCII s, h, i, f, o or e (the
/// elements looked for start so), a `!` or a `?`; `:` after an ASCII t, a tab or line
/// break, or a `;` (the end of a character reference), or before one of those
/// six letters (after a namespace prefix); `=` after an ASCII
/// letter or blank space (letters in either case); `&` before `#`, `c`, `T` or
/// `N` (a numeric reference, `&colon;`, `&Tab;`, `&NewLine;`), or, where
/// `entities` is nonzero (the file declares some), before any ASCII letter or
/// `_`; at the first and
/// last positions, where a neighbour is missing, any `<`, `:`, `=` or `&`. `to`
/// when there is none. The caller decides what each is.
size_t airlock_markup_candidate(const unsigned char *bytes, size_t count, size_t from, size_t to, int entities);

#endif
