// Swift imports Intel ISA-L's igzip through this header. GzipSource inflates
// gzip-compressed tarballs with it because igzip parses each member's header and
// checks its trailer's CRC-32 and length, which libarchive's gzip filter skips.
#include <isa-l/igzip_lib.h>
