// libinotifytools ships no pkg-config file and installs its header in a
// subdirectory; this shim gives the watcher one import.
#include <inotifytools/inotifytools.h>
#include <inotifytools/inotify.h>
