// libmagic (file(1)'s library), imported as is: the decoder children name each
// file's type from its first bytes with it, after loading its database and
// before confining themselves.
#include <magic.h>
