// OpenSSL's libcrypto for SHA-256 of drops: a well-kept implementation rather
// than a hand-written one.
#include <openssl/evp.h>
