/* SPDX-License-Identifier: MIT */
/*
 * A command line in the example programs' style: long options described
 * by a table (each names where its value goes and how it is checked),
 * --help on stdout with exit status 0, and every mistake a usage error:
 * the reason and the usage on stderr, exit status 2.  Header-only, on
 * getopt_long() (so unambiguous prefixes of option names work, and options
 * may follow operands).
 *
 * A program using it defines `prog` (its name in messages, see
 * set_prog()) and usage() (which calls usage_exit()), declared below.
 */
#ifndef TWHEEL_USERSPACE_OPTS_H
#define TWHEEL_USERSPACE_OPTS_H

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>

#include "util.h"

/* Defined by each program. */
static const char *prog;
static void usage(FILE *f, int status) __attribute__((noreturn));

/* The program's name in messages: argv[0] without its directory. */
static inline void set_prog(int argc, char **argv)
{
	if (argc > 0 && argv[0])
		prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
}

/*
 * The body of each program's usage(): the synopsis ("usage: PROG args"),
 * then the help text on f for status 0, else a hint; exits with status.
 */
static inline __attribute__((noreturn)) void usage_exit(FILE *f, int status,
							 const char *args, const char *text)
{
	fprintf(f, "usage: %s %s\n", prog, args);
	if (status)
		fprintf(f, "Try '%s --help' for the options.\n", prog);
	else
		fputs(text, f);
	exit(status);
}

/* A command line that does not work: say why, then the usage (exit 2). */
static inline __attribute__((format(printf, 1, 2), noreturn)) void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(prog, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage(stderr, 2);
}

static inline __attribute__((noreturn)) void bad_arg(const char *opt, const char *val)
{
	usage_error("invalid value for --%s: '%s'", opt, val ? val : "");
}

/*
 * Option values, range-checked (bounds included); a bad one is a usage
 * error.  opt is the option's name, without the dashes.
 */
static inline uint64_t opt_u64(const char *opt, const char *val, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (parse_u64(val, &v) < 0 || v < min || v > max)
		bad_arg(opt, val);
	return v;
}

/* Milliseconds in [min, max], returned in ns. */
static inline uint64_t opt_ms(const char *opt, const char *val, uint64_t min, uint64_t max)
{
	return opt_u64(opt, val, min, max) * NSEC_PER_MSEC;
}

/* Seconds (may be fractional), returned in ns within [min_ns, max_ns]. */
static inline uint64_t opt_seconds(const char *opt, const char *val, uint64_t min_ns,
				   uint64_t max_ns)
{
	uint64_t ns;

	if (parse_seconds_ns(val, &ns) < 0 || ns < min_ns || ns > max_ns)
		bad_arg(opt, val);
	return ns;
}

/* A non-negative number up to max (a fraction: max 1). */
static inline double opt_double(const char *opt, const char *val, double max)
{
	double v;

	if (parse_double(val, &v) < 0 || v > max)
		bad_arg(opt, val);
	return v;
}

/* ---- the option table ------------------------------------------------------ */

enum opt_type {
	OPT_FLAG,	/* no value: sets the int at dst to 1 */
	OPT_U64,	/* an integer in [min, max], into a uint64_t */
	OPT_MS,		/* milliseconds in [min, max], into a uint64_t in ns */
	OPT_SECONDS,	/* seconds, fractions allowed, into a uint64_t in ns in [min, max] */
	OPT_DOUBLE,	/* a number in [0, dmax], into a double */
	OPT_STRING,	/* a non-empty string, into a const char * */
	OPT_CUSTOM,	/* parse(value, dst) returns -1 on a bad value */
};

/*
 * One option: { "name", OPT_U64, &o->field, .min = 1, .max = 100 }, or
 * { "name", OPT_FLAG, .dst = &o->flag } (designated, for -Wextra).  A
 * table ends with an entry whose name is NULL; --help is implied.
 *
 * .def is the option's default written as on the command line ("30" for
 * 30 seconds, "10,1500" for a pair): parse_opts() stores it, parsed and
 * checked like a value given, before it reads argv.  Without .def the
 * field keeps what the program put there (zero, usually).
 */
struct opt {
	const char *name;
	enum opt_type type;
	void *dst;
	uint64_t min, max;
	double dmax;
	int (*parse)(char *val, void *dst);
	const char *def;
};

/* parse_opts() flags */
#define OPTS_NO_OPERANDS	1	/* any operand is a usage error */
/*
 * An unknown or value-less option is reported as "option needs a value or
 * is unknown" when getopt knows its letter (a known long option without
 * its value, an unknown short one) and as "unknown option" otherwise,
 * instead of "unknown option or missing value" for both (presence's
 * wording).
 */
#define OPTS_UNKNOWN_APART	2

static inline void opt_set(const struct opt *op, char *val)
{
	switch (op->type) {
	case OPT_FLAG:
		*(int *)op->dst = 1;
		break;
	case OPT_U64:
		*(uint64_t *)op->dst = opt_u64(op->name, val, op->min, op->max);
		break;
	case OPT_MS:
		*(uint64_t *)op->dst = opt_ms(op->name, val, op->min, op->max);
		break;
	case OPT_SECONDS:
		*(uint64_t *)op->dst = opt_seconds(op->name, val, op->min, op->max);
		break;
	case OPT_DOUBLE:
		*(double *)op->dst = opt_double(op->name, val, op->dmax);
		break;
	case OPT_STRING:
		if (!*val)
			bad_arg(op->name, val);
		*(const char **)op->dst = val;
		break;
	case OPT_CUSTOM:
		if (op->parse(val, op->dst) < 0)
			bad_arg(op->name, val);
		break;
	}
}

/* An option's .def, stored as if it were given (a copy: parse() may write to it). */
static inline void opt_default(const struct opt *op)
{
	char val[64];

	if (op->type == OPT_STRING) {
		*(const char **)op->dst = op->def;
		return;
	}
	snprintf(val, sizeof(val), "%s", op->def);
	opt_set(op, val);
}

/*
 * Parse the options of argv by the table opts: first the defaults (.def),
 * then argv's values, checked and stored as they come (a later one wins);
 * --help and -h call usage(stdout, 0).  Returns the index in argv of the
 * first operand (getopt_long() moves the operands after the options).
 */
static inline int parse_opts(int argc, char **argv, const struct opt *opts, unsigned int flags)
{
	size_t n = 0;
	int c, li;

	for (; opts[n].name; n++)
		if (opts[n].def)
			opt_default(&opts[n]);

	struct option lo[n + 2];

	for (size_t i = 0; i < n; i++)
		lo[i] = (struct option){ opts[i].name,
					 opts[i].type == OPT_FLAG ? no_argument : required_argument,
					 NULL, 256 + (int)i };
	lo[n] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n + 1] = (struct option){ NULL, 0, NULL, 0 };

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, &li)) != -1) {
		if (c == 'h')
			usage(stdout, 0);
		if (c >= 256) {
			opt_set(&opts[c - 256], optarg);
			continue;
		}
		if (!(flags & OPTS_UNKNOWN_APART))
			usage_error("unknown option or missing value: %s", argv[optind - 1]);
		if (optopt)
			usage_error("option needs a value or is unknown: %s", argv[optind - 1]);
		usage_error("unknown option: %s", argv[optind - 1]);
	}
	if ((flags & OPTS_NO_OPERANDS) && optind < argc)
		usage_error("unexpected argument: %s", argv[optind]);
	return optind;
}

#endif /* TWHEEL_USERSPACE_OPTS_H */
