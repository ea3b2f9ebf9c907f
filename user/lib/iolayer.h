/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The shared user-space library of the iolayer tools (libiolayer.a): include this one header. */
#ifndef IOLAYER_H
#define IOLAYER_H

#include "attach.h"
#include "drops.h"
#include "hist.h"
#include "ksyms.h"
#include "log.h"
#include "opts.h"
#include "run.h"
#include "util.h"

#endif
