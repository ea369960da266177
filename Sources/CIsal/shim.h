// Intel ISA-L's igzip for gzip-compressed tarballs: it parses the gzip header and
// verifies the trailer's CRC-32 and length, which libarchive's gzip reader does
// not, and inflates faster than zlib, so the check costs nothing against bsdtar.
#include <isa-l/igzip_lib.h>
