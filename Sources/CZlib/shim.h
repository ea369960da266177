// zlib, imported as is: the content classifier inflates the compressed streams
// of PDFs and the parts of Office and OpenDocument files (ZIPs) within a budget,
// to find what a reader would find in them.
#include <zlib.h>
