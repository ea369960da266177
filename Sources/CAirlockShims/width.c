#define _XOPEN_SOURCE 700
#include "airlock_width.h"
#include <wchar.h>

int airlock_wcwidth(unsigned int scalar) {
    return wcwidth((wchar_t)scalar);
}
