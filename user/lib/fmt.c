/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <stdio.h>
#include "fmt.h"

const char *il_fmt_ns(__u64 ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", ns / 1e9);
	return buf;
}

const char *il_fmt_rate(double bytes_per_s, char *buf, size_t len)
{
	if (bytes_per_s < 1024 * 1024)
		snprintf(buf, len, "%.1f KB/s", bytes_per_s / 1024);
	else
		snprintf(buf, len, "%.1f MB/s", bytes_per_s / (1024 * 1024));
	return buf;
}
