#include "airlock_markup.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static int is_letter(unsigned char byte) {
    unsigned char lower = byte | 0x20;
    return lower >= 'a' && lower <= 'z';
}

static int is_space(unsigned char byte) { return byte == ' ' || (byte >= 0x09 && byte <= 0x0D); }

/// Whether a folded byte starts an element the search looks for: script, html,
/// svg; iframe, frame, object, embed.
static int starts_element(unsigned char folded) {
    return folded == 's' || folded == 'h' || folded == 'i' || folded == 'f' || folded == 'o' || folded == 'e';
}

/// The rule of the header, one position at a time.
static int is_candidate(const unsigned char *bytes, size_t count, size_t index, int entities) {
    unsigned char byte = bytes[index];
    if (byte != '<' && byte != ':' && byte != '=' && byte != '&') return 0;
    if (index == 0 || index + 1 >= count) return 1;
    unsigned char before = bytes[index - 1], after = bytes[index + 1] | 0x20;
    switch (byte) {
    case '<': return starts_element(after) || bytes[index + 1] == '!' || bytes[index + 1] == '?';
    case ':':
        return (before | 0x20) == 't' || before == '\t' || before == '\n' || before == '\r' || before == ';' || starts_element(after);
    case '&': {
        unsigned char next = bytes[index + 1];
        if (entities) return next == '#' || next == '_' || is_letter(next);
        return next == '#' || next == 'c' || next == 'T' || next == 'N';
    }
    default: return is_letter(before) || is_space(before);
    }
}

size_t airlock_markup_candidate(const unsigned char *bytes, size_t count, size_t from, size_t to, int entities) {
    size_t index = from;
    if (index == 0 && index < to) {
        if (is_candidate(bytes, count, 0, entities)) return 0;
        index = 1;
    }
#if defined(__SSE2__)
    const __m128i fold = _mm_set1_epi8(0x20);
    // Sixteen positions at a time, while each has both neighbours to read.
    while (index + 16 <= to && index + 17 <= count) {
        __m128i block = _mm_loadu_si128((const __m128i *)(bytes + index));
        __m128i opens = _mm_cmpeq_epi8(block, _mm_set1_epi8('<'));
        __m128i colons = _mm_cmpeq_epi8(block, _mm_set1_epi8(':'));
        __m128i equals = _mm_cmpeq_epi8(block, _mm_set1_epi8('='));
        __m128i ampersands = _mm_cmpeq_epi8(block, _mm_set1_epi8('&'));
        if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(opens, colons), _mm_or_si128(equals, ampersands))) == 0) {
            index += 16;
            continue;
        }
        __m128i before = _mm_loadu_si128((const __m128i *)(bytes + index - 1));
        __m128i beforeFolded = _mm_or_si128(before, fold);
        __m128i after = _mm_loadu_si128((const __m128i *)(bytes + index + 1));
        __m128i afterFolded = _mm_or_si128(after, fold);
        __m128i element = _mm_or_si128(
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(afterFolded, _mm_set1_epi8('s')), _mm_cmpeq_epi8(afterFolded, _mm_set1_epi8('h'))),
                         _mm_or_si128(_mm_cmpeq_epi8(afterFolded, _mm_set1_epi8('i')), _mm_cmpeq_epi8(afterFolded, _mm_set1_epi8('f')))),
            _mm_or_si128(_mm_cmpeq_epi8(afterFolded, _mm_set1_epi8('o')), _mm_cmpeq_epi8(afterFolded, _mm_set1_epi8('e'))));
        __m128i tag = _mm_and_si128(opens, _mm_or_si128(element, _mm_or_si128(_mm_cmpeq_epi8(after, _mm_set1_epi8('!')),
                                                                               _mm_cmpeq_epi8(after, _mm_set1_epi8('?')))));
        __m128i scheme = _mm_and_si128(colons, _mm_or_si128(_mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(beforeFolded, _mm_set1_epi8('t')), _mm_cmpeq_epi8(before, _mm_set1_epi8('\t'))),
            _mm_or_si128(_mm_cmpeq_epi8(before, _mm_set1_epi8('\n')), _mm_cmpeq_epi8(before, _mm_set1_epi8('\r')))),
            _mm_or_si128(_mm_cmpeq_epi8(before, _mm_set1_epi8(';')), element)));
        // Signed comparisons: bytes from 0x80 are negative, so neither a letter nor a space.
        __m128i named = entities
            ? _mm_or_si128(_mm_cmpeq_epi8(after, _mm_set1_epi8('_')),
                           _mm_and_si128(_mm_cmpgt_epi8(afterFolded, _mm_set1_epi8('a' - 1)),
                                         _mm_cmpgt_epi8(_mm_set1_epi8('z' + 1), afterFolded)))
            : _mm_or_si128(_mm_cmpeq_epi8(after, _mm_set1_epi8('c')),
                           _mm_or_si128(_mm_cmpeq_epi8(after, _mm_set1_epi8('T')), _mm_cmpeq_epi8(after, _mm_set1_epi8('N'))));
        __m128i reference = _mm_and_si128(ampersands, _mm_or_si128(_mm_cmpeq_epi8(after, _mm_set1_epi8('#')), named));
        __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(beforeFolded, _mm_set1_epi8('a' - 1)),
                                       _mm_cmpgt_epi8(_mm_set1_epi8('z' + 1), beforeFolded));
        __m128i space = _mm_or_si128(_mm_cmpeq_epi8(before, _mm_set1_epi8(' ')),
                                     _mm_and_si128(_mm_cmpgt_epi8(before, _mm_set1_epi8(0x08)),
                                                   _mm_cmpgt_epi8(_mm_set1_epi8(0x0E), before)));
        __m128i handler = _mm_and_si128(equals, _mm_or_si128(letter, space));
        int found = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(tag, scheme), _mm_or_si128(handler, reference)));
        if (found != 0) return index + (size_t)__builtin_ctz((unsigned)found);
        index += 16;
    }
#endif
    for (; index < to; index++) {
        if (is_candidate(bytes, count, index, entities)) return index;
    }
    return to;
}
