/* SPDX-License-Identifier: GPL-3.0-or-later */
/* QUERY_PATH: the functions every answer runs through, placed together. */
#ifndef SHOAL_PROTO_HOT_H
#define SHOAL_PROTO_HOT_H

/*
 * Where page-table isolation runs without PCID, every system call drops
 * this process's TLB entries, so after each wake-up the first touch of a
 * code page costs a page walk, often from memory. GCC places functions
 * marked hot in .text.hot, which the linker keeps in one stretch: the query
 * path then spans a few pages, not one or more for each source file it
 * passes through (`tests/bench/pages.sh` counts them).
 */
#define QUERY_PATH __attribute__((hot))

#endif
