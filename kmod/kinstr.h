/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interfaces between the parts of kinstr.ko, one header per part: base.h (the kernel's
 * headers), ksym.h, limits.h, session.h, check/check.h, actions/guard.h, actions/actions.h. A file
 * may include the parts it uses; this header includes them all.
 */
#ifndef KINSTR_KMOD_H
#define KINSTR_KMOD_H

#include "base.h"
#include "ksym.h"
#include "limits.h"
#include "check/check.h"
#include "actions/guard.h"
#include "actions/actions.h"
#include "session.h"

#endif
