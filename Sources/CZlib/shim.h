// zlib for gzip-compressed tarballs: libarchive's gzip reader does not verify the
// gzip trailer (CRC-32 and length), zlib's inflate in gzip mode does.
#include <zlib.h>
