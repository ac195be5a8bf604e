#ifndef CSODIUMBENCH_SHIM_H
#define CSODIUMBENCH_SHIM_H
#include <sodium.h>
#endif
