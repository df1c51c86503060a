/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoald's configuration: one option table read by the YAML loader, the command line and --help. */
#ifndef SHOAL_SERVER_CONF_CONF_H
#define SHOAL_SERVER_CONF_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "proto/cookie.h"
#include "proto/tsig.h"
#include "server/common/tls.h"
#include "server/conf/acl.h"
#include "server/conf/limits.h"
#include "zone/zonedb.h"

#define CONF_LISTEN_MAX             16
#define CONF_THREADS_MAX            256
#define CONF_RELOAD_TIMEOUT_DEFAULT 300
#define CONF_KEYS_MAX               1024
/* SOA queries a second over all secondary zones, by default (serial-query-rate) */
#define CONF_SERIAL_QUERY_RATE_DEFAULT 500

/*
 * One zone's transfer settings, beside its zone_spec_t (conf_zone_xfr(cfg,
 * i) goes with conf_zone_spec(cfg, i)). Entries' keys index conf_t.keys.
 */
/* An address list that may be left out (an empty one given refuses everyone). */
typedef struct conf_acl {
	acl_t list;
	bool set;
} conf_acl_t;

typedef struct conf_zone_xfr {
	acl_t provide_xfr; /* who may transfer the zone from us (ADDR[/PREFIX] KEY) */
	acl_t notify;      /* whom we NOTIFY when its serial changes (ADDR[@PORT] KEY) */
	acl_t primaries;   /* where we transfer it from: the zone is a secondary */
	/* how its primaries over TLS are checked (tls-pin, tls-hostname); NULL: opportunistic */
	tls_auth_t *primaries_tls;
	acl_t allow_notify;    /* who may NOTIFY us: the primaries unless set */
	bool allow_notify_set; /* allow-notify was given (an empty list refuses all) */
	int64_t journal_size;  /* ixfr-journal-size of this zone, or -1: the global one */
	int64_t zonefile_sync; /* zonefile-sync of this zone (seconds), or -1: the global one */
	/* update-max-records, update-rate-per-key of this zone, or -1: the global ones */
	int64_t update_max_records;
	int64_t update_rate_per_key;
	conf_acl_t allow_query; /* who may query it; unset: the global allow-query */
	int32_t dnssec_policy;  /* its dnssec-policy: an index of cfg->dnssec_policies, or -1 */
	uint32_t catalog_role;  /* enum conf_catalog_role: catalog-role (RFC 9432) */
	/* catalog-member-of, catalog-group (server/conf/catalog_member.c); NULL: in none */
	struct conf_member *member;
	struct conf_catalog *catalog; /* a consumer's templates (catalog.c); NULL otherwise */
	/* allow-update and serial-policy (server/conf/update.h); NULL: updates refused */
	struct conf_update *update;
	/* how a primary with a dnssec-policy is signed (its spec's sign); NULL otherwise */
	struct conf_sign *sign;
} conf_zone_xfr_t;

/* The signing algorithms a DNSSEC policy may name (conf_dnssec_algorithm_names). */
enum conf_dnssec_algorithm {
	CONF_DNSSEC_ECDSAP256SHA256,
	CONF_DNSSEC_ED25519,
	CONF_DNSSEC_ECDSAP384SHA384,
	CONF_DNSSEC_RSASHA256,
};

/* The longest id a DNSSEC policy may have. */
#define CONF_DNSSEC_POLICY_ID_MAX 63
/* The most policies in dnssec-policies: far more than anyone writes. */
#define CONF_DNSSEC_POLICIES_MAX 256

/*
 * One entry of dnssec-policies: how the zones that name it are signed.
 * Plain memory (copied whole); durations in seconds, as every duration
 * option. Defaults and bounds are in conf_dnssec_policy_options.
 */
typedef struct conf_dnssec_policy {
	char id[CONF_DNSSEC_POLICY_ID_MAX + 1];
	uint32_t algorithm;      /* enum conf_dnssec_algorithm */
	uint32_t ksk_lifetime;   /* 0: the KSK is not rolled */
	uint32_t zsk_lifetime;   /* 0: the ZSK is not rolled */
	uint32_t rrsig_lifetime; /* a signature's validity, inception to expiration */
	uint32_t rrsig_refresh;  /* re-signed this long before it expires */
	uint32_t rrsig_jitter;   /* expirations spread over this much less */
	uint32_t dnskey_ttl;
	bool nsec3; /* NSEC3 (RFC 5155), else NSEC */
	uint32_t nsec3_iterations;
	uint32_t nsec3_salt_length;
	bool nsec3_opt_out;
	bool cds_cdnskey_publish;
	uint32_t signing_threads;
} conf_dnssec_policy_t;

/*
 * A zone listed in a catalog this server makes (catalog-member-of): the
 * catalog's name and the member's group property (RFC 9432 4.4.2), one
 * allocation owned by its conf_zone_xfr_t.
 */
typedef struct conf_member {
	const char *catalog; /* "catalog.example." as configured */
	const char *group;   /* NULL: none */
	size_t size;         /* octets of the allocation, for a copy */
} conf_member_t;

/* What a zone is to catalog zones (RFC 9432): catalog-role. */
enum conf_catalog_role {
	CONF_CATALOG_NONE,     /* an ordinary zone */
	CONF_CATALOG_CONSUMER, /* its members become zones of this server */
	CONF_CATALOG_PRODUCER, /* made here from the zones that name it in catalog-member-of */
};

extern const char *const conf_catalog_role_names[]; /* "none", "consumer", "producer" */

/* One entry of templates: the settings a catalog's members are configured with. */
typedef struct conf_template {
	char *id;
	conf_zone_xfr_t xfr; /* primaries and the other zone keys; no catalog-* keys */
} conf_template_t;

/* RFC 9432 4.4.2: a group property is one TXT character-string. */
#define CONF_CATALOG_GROUP_MAX 255

/* A group of catalog-group-templates and its template (an index of cfg->templates). */
typedef struct conf_catalog_group {
	char name[CONF_CATALOG_GROUP_MAX + 1];
	uint32_t template;
} conf_catalog_group_t;

/*
 * A consumer catalog's templates: catalog-template and
 * catalog-group-templates. One allocation, copied whole.
 */
typedef struct conf_catalog {
	uint32_t template; /* catalog-template: an index of cfg->templates */
	size_t group_count;
	conf_catalog_group_t groups[];
} conf_catalog_t;

/*
 * The template (an index of cfg->templates) of a member of consumer
 * catalog zx whose group is `group` (NULL: none): the group's, else the
 * catalog's. zx must be a consumer's. Any thread that holds its cfg.
 */
uint32_t conf_catalog_template(const conf_zone_xfr_t *zx, const char *group);
/* The configuration read when the command line names none (-c FILE) */
#define CONF_FILE_DEFAULT SYSCONFDIR "/shoal/shoald.conf"
/*
 * Where shoalctl looks by default, and what the installed configuration
 * sets: a folder of its own under the run-time folder, so that a server
 * that runs as its own user (systemd's RuntimeDirectory=shoal) may make it.
 */
#define CONF_CONTROL_DEFAULT RUNSTATEDIR "/shoal/shoald.ctl"
/*
 * Where the zones' timers are kept across restarts when state-dir is not
 * set: systemd's StateDirectory=shoal, which is always under /var/lib.
 * Used only when it exists: shoald never makes it (a test or a second
 * server must not share a folder it did not choose).
 */
#define CONF_STATE_DIR_DEFAULT "/var/lib/shoal"
/* Where the zones' DNSSEC keys are kept when keys-dir is not set. */
#define CONF_KEYS_DIR_DEFAULT "/var/lib/shoal/keys"

/* A secret from the configuration (cookie-secret), or none. */
typedef struct conf_secret {
	bool set;
	uint8_t value[COOKIE_SECRET_LEN];
} conf_secret_t;

/*
 * The whole configuration. Strings are owned by the config (conf_clear
 * frees them); a zone's name and file are in its own allocation, which
 * copies share.
 */
typedef struct conf {
	listen_addr_t listen[CONF_LISTEN_MAX];
	size_t listen_count;
	listen_addr_t listen_tls[CONF_LISTEN_MAX]; /* DNS over TLS, zone transfers over TLS */
	size_t listen_tls_count;
	uint32_t threads;
	uint32_t socket_mode;        /* enum socket_mode (server/net/socket.h) */
	bool cpu_affinity;           /* workers pinned, UDP steered by CPU */
	uint32_t udp_receive_buffer; /* octets asked for each UDP socket */
	uint32_t udp_send_buffer;
	char *user;
	char *group;
	char *nsid;
	bool nsid_thread;
	char *identity; /* CHAOS id.server; NULL: the host name */
	char *version;  /* CHAOS version.server; NULL: REFUSED */
	char *control;
	char *pid_file;
	char *tls_key_file; /* with tls_cert_file; NULL: the self-signed pair in state-dir */
	char *tls_cert_file;
	char *tls_ca_file;  /* CAs that sign clients (mutual TLS) and primaries (tls-hostname) */
	uint32_t log_level; /* enum log_level (server/common/log.h) */
	bool syslog;
	char *log_file; /* lines appended there instead of stderr; NULL: stderr */
	uint32_t edns_size;
	tcp_limits_t tcp;
	uint32_t reload_timeout;          /* seconds a reload may take before it is abandoned */
	listen_addr_t metrics;            /* the Prometheus endpoint; addr_len 0: off */
	addr_prefix_list_t metrics_allow; /* its clients; none listed: loopback only */
	/* every zone's limits, set in each zone spec's limits once all options are read */
	uint32_t max_types_per_name;
	uint32_t max_nsec3_iterations; /* a zone's NSEC3PARAM asking for more is refused */
	uint32_t max_records_per_type;
	uint32_t max_zone_file_mib; /* MiB read from one zone's files, $INCLUDEs counted */
	uint32_t max_zone_includes; /* $INCLUDE directives followed per zone */
	/* zone transfers: every zone's journal and transfer limits, the secondaries' timers */
	uint32_t ixfr_journal_size;      /* octets of IXFR history per zone */
	uint32_t ixfr_journal_total_mib; /* MiB of journal files together; 0: none on disk */
	uint32_t zonefile_sync;          /* seconds from a new version to its file's write */
	uint32_t max_zone_size;          /* octets one incoming transfer may bring */
	uint32_t notify_retry;           /* NOTIFY sent this many times until answered */
	uint32_t xfr_timeout;            /* seconds an incoming transfer may take */
	uint32_t xfr_message_timeout;    /* seconds to connect, and for each message */
	uint32_t transfers_out;          /* outgoing transfers at once, per worker */
	uint32_t transfers_in;           /* incoming transfers at once: the pool's threads */
	uint32_t serial_query_rate;      /* SOA queries a second to primaries, all zones together */
	uint32_t min_refresh_time, max_refresh_time; /* bounds on the SOA's timers */
	uint32_t min_retry_time, max_retry_time;
	uint32_t min_expire_time, max_expire_time;
	/*
	 * dynamic updates (server/events/update.h): in flight per zone, in all;
	 * records per update; a second per TSIG key (unsigned: per address), 0: none
	 */
	uint32_t update_max_inflight;
	uint32_t update_max_inflight_total;
	uint32_t update_max_records;
	uint32_t update_rate_per_key;
	tsig_key_t *keys; /* keys: wiped by conf_clear */
	size_t key_count;
	conf_acl_t allow_query;              /* every zone's without its own; unset: anyone */
	char *dnstap_file;                   /* dnstap-file, or NULL */
	char *dnstap_socket;                 /* dnstap-socket, or NULL */
	uint32_t dnstap_sample;              /* one query in N logged */
	rrl_limits_t rrl;                    /* rate-limit-* */
	conf_secret_t cookie_secret;         /* the current secret, or random when not set */
	conf_secret_t cookie_secret_staging; /* also accepted */
	bool cookie_require;                 /* BADCOOKIE without a valid server cookie (UDP) */
	char *zones_dir; /* relative zone paths of the file start here; NULL: the file's folder */
	/* the zones' timers across restarts; NULL: CONF_STATE_DIR_DEFAULT (when it exists) */
	char *state_dir;
	conf_dnssec_policy_t *dnssec_policies; /* dnssec-policies, dnssec_policy_count of them */
	size_t dnssec_policy_count;
	char *keys_dir; /* where the zones' DNSSEC keys are kept; NULL: CONF_KEYS_DIR_DEFAULT */
	conf_template_t *templates; /* templates: what catalogs' members are configured with */
	size_t template_count;
	/*
	 * The zones, in order (server/conf/zones.c): each allocated on its own,
	 * in chunks that copies share until one changes them; reached by
	 * conf_zone_spec and conf_zone_xfr. The table of chunks is this
	 * configuration's, as is the name index's table of parts (by hash).
	 */
	struct conf_zone_run *zone_runs;
	size_t zone_run_count, zone_run_cap;
	struct conf_name_part **zone_names;
	size_t zone_count;
	uint64_t zone_seq; /* the next zone's creation number: its copies go on from it */
	/* the secondaries among them (conf_secondary_count), unless a zone's lists were handed
	 * out to change since they were counted (conf_zone_xfr_mut): then counted anew */
	size_t zone_secondaries;
	bool zone_secondaries_stale;
	/* from the command line only */
	char *file;                /* -c FILE, CONF_FILE_DEFAULT when it exists, or NULL */
	bool file_default_missing; /* no -c, and CONF_FILE_DEFAULT does not exist */
	bool check;
	bool share_port; /* --share-port: no instance check (server/daemon/instance.h) */
	char *takeover;  /* --takeover PATH: the running server's control socket, or NULL */
	/* the command line as given, for a restart with the same arguments (main's, not owned) */
	int argc;
	char **argv;
} conf_t;

/* Kinds of value an option takes. */
enum conf_type {
	CONF_UINT, /* decimal, within [min, max] */
	CONF_BOOL, /* yes/no (also true/false, on/off) */
	CONF_STRING,
	CONF_ENUM,      /* one of names[] (stored as its index) */
	CONF_LISTEN,    /* list of ADDR@PORT (min: the port when none is given, 0: 53) */
	CONF_ZONES,     /* list of {name, file}; on the command line NAME=PATH */
	CONF_KEYS,      /* list of {name, algorithm, secret}: file only */
	CONF_ADDR,      /* one [ADDR@]PORT, a port alone on 127.0.0.1 (a listen_addr_t) */
	CONF_PREFIXES,  /* list of ADDR/BITS (addr_prefix_list_t); the command line adds */
	CONF_SECRET,    /* 32 hex digits (conf_secret_t) */
	CONF_ACL,       /* list of "ADDR[/PREFIX] KEY|NOKEY" (conf_acl_t): file only */
	CONF_POLICIES,  /* list of {id, ...} (conf_dnssec_policy_t): file only */
	CONF_TEMPLATES, /* list of {id, zone keys} (conf_template_t): file only */
};

/* One option: everything the loaders, --help and the man-page test need. */
typedef struct conf_option {
	const char *name; /* key in the YAML file */
	const char *cli;  /* long option ("listen"), or NULL: file only */
	const char *arg;  /* argument name in --help ("ADDR@PORT") */
	enum conf_type type;
	uint32_t min, max;        /* CONF_UINT */
	const char *const *names; /* CONF_ENUM, NULL-terminated */
	const char *def;          /* default as text, for --help and the man page */
	size_t offset;            /* where the value lives in conf_t */
	const char *help;
	/*
	 * CONF_RESTART: a running server cannot take a new value (sockets,
	 * threads, identity, what workers were built with); shoalctl reconfig
	 * reports it by name and applies the rest. false: reconfig applies it.
	 */
	bool restart;
} conf_option_t;

#define CONF_RESTART true
#define CONF_RUNTIME false

/* The option table, and its length. Static storage, read-only. */
extern const conf_option_t conf_options[];
extern const size_t conf_option_count;

/* The keys of one zone's mapping (zones:), for the loader's messages and the man page. */
typedef struct conf_zone_key {
	const char *name;
	const char *help;
} conf_zone_key_t;

extern const conf_zone_key_t conf_zone_keys[];
extern const size_t conf_zone_key_count;

/*
 * The index of the zone called name (any case, final dot or not) in
 * cfg->zones (the first, when configured twice), or -1. Any thread; one
 * hash lookup.
 */
long conf_zone_index(const conf_t *cfg, const char *name);

/*
 * Zone i's spec and transfer settings (0 <= i < zone_count), read-only:
 * configurations share them (conf_copy). One lookup in a table of chunks
 * (a binary search once zones were removed). Any thread that holds cfg;
 * valid while cfg holds the zone.
 */
const zone_spec_t *conf_zone_spec(const conf_t *cfg, size_t i);
const conf_zone_xfr_t *conf_zone_xfr(const conf_t *cfg, size_t i);

/*
 * Zone i's spec or transfer settings to change: cfg's own, the zone (and
 * its chunk) copied first when another configuration shares it. The
 * thread that owns cfg, before any other reads it. Valid until cfg's zones
 * change. NULL when out of memory (cfg is as it was).
 */
zone_spec_t *conf_zone_spec_mut(conf_t *cfg, size_t i);
conf_zone_xfr_t *conf_zone_xfr_mut(conf_t *cfg, size_t i);

/* conf_zone_spec of a const conf_t * as a void *, for zonedb_build_t.spec_of. */
const zone_spec_t *conf_spec_of(const void *cfg, size_t i);

/* Whether zone i is a secondary (it has primaries). */
static inline bool conf_zone_is_secondary(const conf_t *cfg, size_t i)
{
	return conf_zone_xfr(cfg, i)->primaries.count > 0;
}

/*
 * How many zones of cfg are secondaries: kept as zones are loaded, added
 * and removed, so a zone-add or zone-remove asks nothing of every zone (a
 * pass over them once a zone's lists were handed out to change). Any
 * thread that holds cfg.
 */
size_t conf_secondary_count(const conf_t *cfg);

/*
 * Set every option to its default (threads: the online CPUs). cfg is
 * caller memory; call conf_clear when done. Returns 0 or SHOAL_ENOMEM.
 */
int conf_init(conf_t *cfg);

/* Free what cfg owns and zero it. */
void conf_clear(conf_t *cfg);

/*
 * Read the YAML file `path` into cfg (over the defaults). A relative zone
 * file path is taken from zones-dir (itself from the file's folder when
 * relative), or from the file's folder. On error returns
 * SHOAL_ECONFIG (or SHOAL_ENOMEM) and writes "FILE:LINE: reason" into
 * err[0..errlen). Main thread, at start-up.
 */
int conf_load_file(conf_t *cfg, const char *path, char *err, size_t errlen);

/*
 * Parse the command line into cfg. The file named by -c (without -c,
 * CONF_FILE_DEFAULT when it exists: cfg->file_default_missing tells when
 * not) is loaded first, then the other options override it (--listen and --zone given on the
 * command line replace, respectively add to, the file's). Returns 0 to go
 * on, 1 when the program should exit 0 (--help, --version printed to out),
 * or a negative error with a message in err: SHOAL_EINVAL for a wrong
 * command line (a usage error), another for the file.
 */
int conf_parse_args(conf_t *cfg, int argc, char **argv, FILE *out, char *err, size_t errlen);

/*
 * Checks that span options (zone files readable, listen not empty).
 * Returns 0 or SHOAL_ECONFIG with a message in err.
 */
int conf_validate(const conf_t *cfg, char *err, size_t errlen);

/*
 * Add zone `name` served from `file` to cfg, with cfg's zone limits and
 * no transfer settings (a primary). There is no bound on the zones but
 * memory. Returns 0, SHOAL_EEXIST when cfg has the zone, or SHOAL_ENOMEM.
 */
int conf_zone_add(conf_t *cfg, const char *name, const char *file);

/*
 * conf_zone_add with the settings (transfer lists, journal, TLS checks)
 * copied from `from` (a template's: a catalog's member). Returns as
 * conf_zone_add.
 */
int conf_zone_add_from(conf_t *cfg, const char *name, const char *file,
		       const conf_zone_xfr_t *from);

/* Zone i of cfg is saved to and read from `file` from now on. Returns 0 or SHOAL_ENOMEM. */
int conf_zone_set_file(conf_t *cfg, size_t i, const char *file);

/*
 * Zone i of cfg takes the settings of `from` (a copy of its own): a
 * member moved between catalogs, or whose group changed. Returns 0 or
 * SHOAL_ENOMEM (zone i unchanged).
 */
int conf_zone_set_from(conf_t *cfg, size_t i, const conf_zone_xfr_t *from);

/*
 * Remove zone i (0 <= i < zone_count) from cfg, the zones after it moved
 * down one; what only cfg held is freed. Costs the zone, its chunk and its
 * name's part. Returns 0 or SHOAL_ENOMEM (cfg is as it was).
 */
int conf_zone_remove(conf_t *cfg, size_t i);

/*
 * Make zone i of cfg a member of catalog `catalog` (zone-add --catalog),
 * with no group, transferred by those the catalog is: the catalog's
 * provide-xfr and notify entries appended to the zone's. The catalog must
 * be a zone of cfg with catalog-role producer, not zone i. Returns 0,
 * SHOAL_EINVAL with the reason in err, or SHOAL_ENOMEM. The caller's
 * thread (a configuration of its own).
 */
int conf_zone_set_catalog(conf_t *cfg, size_t i, const char *catalog, char *err, size_t errlen);

/*
 * A copy of src into dst (caller memory, to conf_clear): everything but
 * the command line (argc, argv are shared) and the zones, which the two
 * share until one changes them (conf_zone_spec_mut): a pointer per chunk
 * of zones, not a copy per zone. Returns 0 or SHOAL_ENOMEM (dst is then
 * cleared).
 */
int conf_copy(conf_t *dst, const conf_t *src);

/*
 * The options marked CONF_RESTART whose value differs between a (the
 * running configuration) and b (the one read anew), as "threads, listen"
 * into buf[0..cap). Returns how many differ. Any thread.
 */
size_t conf_restart_changes(const conf_t *a, const conf_t *b, char *buf, size_t cap);

/*
 * Whether zone i of a and zone j of b load the same data: the same name,
 * file, limits and kind (primary or secondary). A reconfig keeps such a
 * zone's loaded version instead of reading its file again.
 */
bool conf_zone_same_data(const conf_t *a, size_t i, const conf_t *b, size_t j);

/*
 * Whether zone i of a and zone j of b are transferred in from the same
 * place: the same data (conf_zone_same_data) and the same primaries in the
 * same order with the same keys (compared by content, not index). A
 * reconfig keeps such a secondary zone's timers and its transfer in
 * flight; the other options (timeouts, the timers' bounds) apply from its
 * next refresh. Any thread.
 */
bool conf_zone_same_primaries(const conf_t *a, size_t i, const conf_t *b, size_t j);

/* zonefile-sync's bound, in seconds: a day. */
#define CONF_ZONEFILE_SYNC_MAX 86400

/*
 * Seconds from a new version of secondary zone i of cfg to the write of
 * its file (zonefile-sync: its own, else the global one). Any thread that
 * holds cfg.
 */
uint32_t conf_zone_sync(const conf_t *cfg, size_t i);

/*
 * Zone i of cfg's update-max-records and update-rate-per-key: its own,
 * else the global one. Any thread that holds cfg.
 */
uint32_t conf_zone_update_max_records(const conf_t *cfg, size_t i);
uint32_t conf_zone_update_rate(const conf_t *cfg, size_t i);

/*
 * Whether zone i of a and zone j of b are configured the same in every
 * setting: the same primaries (conf_zone_same_primaries), transfer and
 * NOTIFY lists with the same keys, and IXFR journal size. A reconfig names
 * a zone whose data it keeps but whose settings differ ("options"). Any
 * thread.
 */
bool conf_zone_same_settings(const conf_t *a, size_t i, const conf_t *b, size_t j);

/*
 * Whether `list` (of b) has an entry naming the peer of entry x (of a)
 * with the same key, by content: true with its index in *at. Any thread.
 */
bool conf_acl_entry_find(const conf_t *a, const acl_entry_t *x, const conf_t *b, const acl_t *list,
			 size_t *at);

/*
 * The allow-query list of zone i of cfg (a const conf_t *): its own, else
 * the global one, or NULL when neither is set (anyone may query it). A
 * zonedb_policy_fn, for zonedb_set_policies; the list lives as long as
 * cfg. Any thread.
 */
const void *conf_zone_allow_query(const void *cfg, size_t i);

/*
 * The global allow-query list of cfg (what conf_zone_allow_query gives a
 * zone without its own), or NULL when unset. Any thread.
 */
const void *conf_allow_query_global(const conf_t *cfg);

/*
 * The keys of one entry of dnssec-policies but its id, as conf_options
 * describes options (offsets into a conf_dnssec_policy_t), for the loader
 * and the man-page test. Static storage, read-only.
 */
extern const conf_option_t conf_dnssec_policy_options[];
extern const size_t conf_dnssec_policy_option_count;

/* Names of enum conf_dnssec_algorithm, NULL-terminated. */
extern const char *const conf_dnssec_algorithm_names[];

/* The DNSSEC algorithm number (RFC 8624 table) of enum conf_dnssec_algorithm a. */
uint8_t conf_dnssec_algorithm_number(uint32_t a);

/* Zone i's DNSSEC policy in cfg, or NULL when it names none. Any thread that holds cfg. */
const conf_dnssec_policy_t *conf_zone_dnssec_policy(const conf_t *cfg, size_t i);

/*
 * Whether zone i of a and zone j of b have the same DNSSEC policy, by
 * content (an id and every value), or both none. Any thread.
 */
bool conf_zone_same_dnssec(const conf_t *a, size_t i, const conf_t *b, size_t j);

/* How many zones of cfg name a dnssec-policy. */
size_t conf_dnssec_zone_count(const conf_t *cfg);

/*
 * keys-dir needs a restart: a reconfig's cfg keeps running's, and its
 * zones sign with the keys there. Returns 0 or SHOAL_ENOMEM. The thread
 * that builds the reconfig.
 */
int conf_keys_dir_keep(conf_t *cfg, const conf_t *running);

/*
 * shoald --check: the zones that sign are read and their keys checked,
 * nothing signed nor written to keys-dir. Main thread, before the zones
 * are read.
 */
void conf_dnssec_check_only(const conf_t *cfg);

/* One option of the command line as --help shows it. */
typedef struct conf_help_entry {
	char head[64];    /* "-c, --config FILE", "--check", "--listen ADDR@PORT" */
	const char *help; /* static */
	const char *def;  /* the default as text, or NULL for a command-line flag */
} conf_help_entry_t;

/*
 * The i-th option of --help (from 0): the command-line flags, then every
 * option of the table with a cli name, in table order. Fills *e and
 * returns true, or returns false past the last. Any thread.
 */
bool conf_help_entry(size_t i, conf_help_entry_t *e);

/* Print the --help text: every conf_help_entry. */
void conf_print_help(FILE *out);

/*
 * Parse "ADDR@PORT" (or "ADDR", port 53; IPv6 in brackets or not) into *a,
 * as addr_parse with ADDR_PORT does, its text addr_text's. Returns 0 or
 * SHOAL_EINVAL.
 */
int conf_parse_listen(const char *text, listen_addr_t *a);

/*
 * The addresses of a CONF_LISTEN option of cfg (listen, listen-tls) and,
 * in *count, how many. Any thread.
 */
const listen_addr_t *conf_listen_addrs(const conf_t *cfg, const conf_option_t *o, size_t *count);

/* The port of listen-tls when an address has none (RFC 7858 3.1). */
#define CONF_TLS_PORT 853

/*
 * Whether cfg asks for a client's certificate anywhere (a provide-xfr
 * entry with "tls PIN" or "tls ca"): TLS servers then ask every client
 * for one. Any thread.
 */
bool conf_tls_mutual(const conf_t *cfg);

/* Whether a zone of cfg checks its TLS primaries' host names (tls-hostname). Any thread. */
bool conf_tls_hostnames(const conf_t *cfg);

#endif
