#ifndef BUDGET_CLIBPQ_SHIM_H
#define BUDGET_CLIBPQ_SHIM_H

// The include path comes from pkg-config (`pkgConfig: "libpq"` in Package.swift), never an absolute path.
#include <libpq-fe.h>

#endif
