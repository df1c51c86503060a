/* SPDX-License-Identifier: GPL-3.0-or-later */
/* DNS protocol constants: header layout, types, classes, rcodes, EDNS. */
#ifndef SHOAL_PROTO_DNS_H
#define SHOAL_PROTO_DNS_H

#define DNS_HEADER_SIZE  12
#define DNS_UDP_MIN      512   /* RFC 1035 2.3.4; RFC 6891 6.2.5 floor */
#define DNS_EDNS_DEFAULT 1232  /* DNS flag day 2020 advice */
#define DNS_TCP_MAX      65535 /* RFC 1035 4.2.2 two-octet length */

/* Header flag bits in the 16-bit flags word (RFC 1035 4.1.1, RFC 4035). */
#define DNS_FLAG_QR      0x8000
#define DNS_FLAG_AA      0x0400
#define DNS_FLAG_TC      0x0200
#define DNS_FLAG_RD      0x0100
#define DNS_FLAG_RA      0x0080
#define DNS_FLAG_Z       0x0040
#define DNS_FLAG_AD      0x0020
#define DNS_FLAG_CD      0x0010
#define DNS_OPCODE_SHIFT 11
#define DNS_OPCODE_MASK  0x7800
#define DNS_RCODE_MASK   0x000f

enum dns_opcode {
	DNS_OPCODE_QUERY = 0,
	DNS_OPCODE_IQUERY = 1,
	DNS_OPCODE_STATUS = 2,
	DNS_OPCODE_NOTIFY = 4,
	DNS_OPCODE_UPDATE = 5,
};

enum dns_rcode {
	DNS_RCODE_NOERROR = 0,
	DNS_RCODE_FORMERR = 1,
	DNS_RCODE_SERVFAIL = 2,
	DNS_RCODE_NXDOMAIN = 3,
	DNS_RCODE_NOTIMP = 4,
	DNS_RCODE_REFUSED = 5,
	DNS_RCODE_YXDOMAIN = 6, /* 6 to 10: RFC 2136 2.2 */
	DNS_RCODE_YXRRSET = 7,
	DNS_RCODE_NXRRSET = 8,
	DNS_RCODE_NOTAUTH = 9,
	DNS_RCODE_NOTZONE = 10,
	DNS_RCODE_BADVERS = 16,   /* extended: upper 8 bits go in the OPT TTL (RFC 6891 6.1.3) */
	DNS_RCODE_BADCOOKIE = 23, /* RFC 7873 8 */
	DNS_RCODE_MAX = 24,       /* size of per-rcode counter arrays */
};

/* Room for any text dns_rcode_name writes: "RCODE" and an unsigned in decimal. */
#define DNS_RCODE_TEXT_MAX 16

/*
 * The mnemonic of rcode ("NOERROR", "BADCOOKIE": the names above), or, for
 * one without a name here, "RCODE<n>" written into buf. The one rcode name
 * table of statistics and reports. Static storage or buf; any thread.
 */
const char *dns_rcode_name(unsigned rcode, char buf[DNS_RCODE_TEXT_MAX]);

/*
 * TSIG errors (RFC 8945 3, IANA "TSIG/TKEY Error Values"): the Error field
 * of a TSIG RR, sent with RCODE NOTAUTH (RFC 8945 5.2).
 */
enum dns_tsig_error {
	DNS_TSIG_NOERROR = 0,
	DNS_TSIG_BADSIG = 16,
	DNS_TSIG_BADKEY = 17,
	DNS_TSIG_BADTIME = 18,
	DNS_TSIG_BADTRUNC = 22,
};

/*
 * The mnemonic of a TSIG error ("BADSIG"). The TSIG Error field shares the
 * RCODE space but for 16, BADSIG there and BADVERS in an OPT (RFC 6895
 * 2.3): any other value is named as dns_rcode_name names it. Static
 * storage or buf; any thread.
 */
const char *dns_tsig_error_name(unsigned error, char buf[DNS_RCODE_TEXT_MAX]);

enum dns_class {
	DNS_CLASS_IN = 1,
	DNS_CLASS_CH = 3,
	DNS_CLASS_NONE = 254,
	DNS_CLASS_ANY = 255,
};

enum dns_type {
	DNS_TYPE_A = 1,
	DNS_TYPE_NS = 2,
	DNS_TYPE_MD = 3,
	DNS_TYPE_MF = 4,
	DNS_TYPE_CNAME = 5,
	DNS_TYPE_SOA = 6,
	DNS_TYPE_MB = 7,
	DNS_TYPE_MG = 8,
	DNS_TYPE_MR = 9,
	DNS_TYPE_NULL = 10,
	DNS_TYPE_WKS = 11,
	DNS_TYPE_PTR = 12,
	DNS_TYPE_HINFO = 13,
	DNS_TYPE_MINFO = 14,
	DNS_TYPE_MX = 15,
	DNS_TYPE_TXT = 16,
	DNS_TYPE_RP = 17,
	DNS_TYPE_AFSDB = 18,
	DNS_TYPE_SIG = 24,
	DNS_TYPE_KEY = 25,
	DNS_TYPE_AAAA = 28,
	DNS_TYPE_LOC = 29,
	DNS_TYPE_NXT = 30,
	DNS_TYPE_SRV = 33,
	DNS_TYPE_NAPTR = 35,
	DNS_TYPE_KX = 36,
	DNS_TYPE_CERT = 37,
	DNS_TYPE_DNAME = 39,
	DNS_TYPE_OPT = 41,
	DNS_TYPE_DS = 43,
	DNS_TYPE_SSHFP = 44,
	DNS_TYPE_RRSIG = 46,
	DNS_TYPE_NSEC = 47,
	DNS_TYPE_DNSKEY = 48,
	DNS_TYPE_NSEC3 = 50,
	DNS_TYPE_NSEC3PARAM = 51,
	DNS_TYPE_TLSA = 52,
	DNS_TYPE_CDS = 59,
	DNS_TYPE_CDNSKEY = 60,
	DNS_TYPE_SVCB = 64,
	DNS_TYPE_HTTPS = 65,
	DNS_TYPE_TKEY = 249,
	DNS_TYPE_TSIG = 250,
	DNS_TYPE_IXFR = 251,
	DNS_TYPE_AXFR = 252,
	DNS_TYPE_MAILB = 253,
	DNS_TYPE_MAILA = 254,
	DNS_TYPE_ANY = 255,
	DNS_TYPE_CAA = 257,
};

/* EDNS (RFC 6891) */
#define DNS_EDNS_DO 0x8000 /* in the OPT TTL's low 16 bits */
enum dns_edns_option {
	DNS_EDNS_NSID = 3, /* RFC 5001 */
	DNS_EDNS_CLIENT_SUBNET = 8,
	DNS_EDNS_COOKIE = 10, /* RFC 7873 */
	DNS_EDNS_TCP_KEEPALIVE = 11,
	DNS_EDNS_PADDING = 12,
	DNS_EDNS_EDE = 15, /* RFC 8914 */
};

/* Message sections, as indexes into count arrays. */
enum dns_section {
	DNS_SECTION_QUESTION = 0,
	DNS_SECTION_ANSWER = 1,
	DNS_SECTION_AUTHORITY = 2,
	DNS_SECTION_ADDITIONAL = 3,
};

#endif
