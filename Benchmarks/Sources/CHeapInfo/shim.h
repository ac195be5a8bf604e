#ifndef CHEAPINFO_SHIM_H
#define CHEAPINFO_SHIM_H
// The allocator's statistics, for the heap-growth measurement (glibc: mallinfo2;
// Darwin: malloc_zone_statistics).
#if defined(__APPLE__)
#include <malloc/malloc.h>
#else
#include <malloc.h>
#endif
#endif
