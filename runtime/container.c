/* SPDX-License-Identifier: GPL-2.0-or-later */
/* placeholder */
typedef int kist_placeholder_container;
