// liblzma's raw LZMA decoder, for the one thing libarchive does not tell:
// whether a 7z archive's (usually LZMA-compressed) header lists deletion
// markers, which airlock must read from the header itself.
#include <lzma.h>
