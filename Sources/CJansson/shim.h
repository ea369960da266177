// Jansson reads airlock.json strictly: it refuses duplicate keys and trailing
// commas and says where a syntax error is (line, column), which Foundation's
// JSON readers do not.
#include <jansson.h>
