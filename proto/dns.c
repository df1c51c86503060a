/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Names of protocol numbers: the one rcode name table. */
#include <stdio.h>

#include "proto/dns.h"

const char *dns_rcode_name(unsigned rcode, char buf[DNS_RCODE_TEXT_MAX])
{
	static const char *const names[DNS_RCODE_MAX] = {
		[DNS_RCODE_NOERROR] = "NOERROR",     [DNS_RCODE_FORMERR] = "FORMERR",
		[DNS_RCODE_SERVFAIL] = "SERVFAIL",   [DNS_RCODE_NXDOMAIN] = "NXDOMAIN",
		[DNS_RCODE_NOTIMP] = "NOTIMP",       [DNS_RCODE_REFUSED] = "REFUSED",
		[DNS_RCODE_YXDOMAIN] = "YXDOMAIN",   [DNS_RCODE_YXRRSET] = "YXRRSET",
		[DNS_RCODE_NXRRSET] = "NXRRSET",     [DNS_RCODE_NOTAUTH] = "NOTAUTH",
		[DNS_RCODE_NOTZONE] = "NOTZONE",     [DNS_RCODE_BADVERS] = "BADVERS",
		[DNS_RCODE_BADCOOKIE] = "BADCOOKIE",
	};
	if (rcode < DNS_RCODE_MAX && names[rcode])
		return names[rcode];
	snprintf(buf, DNS_RCODE_TEXT_MAX, "RCODE%u", rcode);
	return buf;
}

const char *dns_tsig_error_name(unsigned error, char buf[DNS_RCODE_TEXT_MAX])
{
	static const char *const names[] = {
		[DNS_TSIG_BADSIG] = "BADSIG",
		[DNS_TSIG_BADKEY] = "BADKEY",
		[DNS_TSIG_BADTIME] = "BADTIME",
		[DNS_TSIG_BADTRUNC] = "BADTRUNC",
	};
	if (error < sizeof(names) / sizeof(names[0]) && names[error])
		return names[error];
	return dns_rcode_name(error, buf);
}
