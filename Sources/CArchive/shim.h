// libarchive's reading API, imported as is: airlock reads archives with it and
// never uses archive_write_disk (the staging writer is airlock's own).
#include <archive.h>
#include <archive_entry.h>
