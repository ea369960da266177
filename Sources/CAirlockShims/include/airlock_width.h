#ifndef AIRLOCK_WIDTH_H
#define AIRLOCK_WIDTH_H
// wcwidth(3) is declared only under _XOPEN_SOURCE, which Swift's Glibc module
// does not define; tables of names need it to align wide characters.

/// The display columns of one Unicode scalar in the calling thread's locale; -1 if not printable.
int airlock_wcwidth(unsigned int scalar);

#endif
