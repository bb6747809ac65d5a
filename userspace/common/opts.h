/* SPDX-License-Identifier: MIT */
/*
 * A command line in the user-space programs' style (the examples, the
 * bench, twheelctl): long options, and short ones where a program has
 * them, described by a table (each names where its value goes and how it
 * is checked), --help on stdout with exit status 0, and every mistake a
 * usage error: the reason and the usage on stderr, exit status 2.
 * Header-only, on getopt_long() (so unambiguous prefixes of option names
 * work, and options may follow operands).
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

/*
 * The operand of a command line that takes exactly one, argv[i] (i from
 * parse_opts()): a usage error if it is missing ("missing WHAT") or is
 * not the last argument.
 */
static inline char *sole_operand(int argc, char **argv, int i, const char *what)
{
	if (i >= argc)
		usage_error("missing %s", what);
	if (i + 1 < argc)
		usage_error("unexpected argument: %s", argv[i + 1]);
	return argv[i];
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
 * table ends with { NULL }; --help and -h are implied.
 *
 * .letter is the option's short form ('i' for -i), if it has one; an
 * option may have a letter alone (name NULL), as the bench's -n N.
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
	int letter;
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
/*
 * Stop at the first operand (getopt's "+"): a program with commands
 * parses its own options up to the command's name, then the command
 * parses the rest, argv + that index, with a table of its own.
 */
#define OPTS_IN_ORDER		4

/* A bad value: the usage error names the option as the table does. */
static inline __attribute__((noreturn)) void bad_arg(const struct opt *op, const char *val)
{
	if (!op->name)
		usage_error("invalid value for -%c: '%s'", op->letter, val ? val : "");
	usage_error("invalid value for --%s: '%s'", op->name, val ? val : "");
}

/* Check val against op (bounds included) and store it; -1 if it is bad. */
static inline int opt_store(const struct opt *op, char *val)
{
	uint64_t u;
	double d;

	switch (op->type) {
	case OPT_FLAG:
		*(int *)op->dst = 1;
		return 0;
	case OPT_U64:
	case OPT_MS:
		if (parse_u64(val, &u) < 0 || u < op->min || u > op->max)
			return -1;
		*(uint64_t *)op->dst = op->type == OPT_MS ? u * NSEC_PER_MSEC : u;
		return 0;
	case OPT_SECONDS:
		if (parse_seconds_ns(val, &u) < 0 || u < op->min || u > op->max)
			return -1;
		*(uint64_t *)op->dst = u;
		return 0;
	case OPT_DOUBLE:
		if (parse_double(val, &d) < 0 || d > op->dmax)
			return -1;
		*(double *)op->dst = d;
		return 0;
	case OPT_STRING:
		if (!*val)
			return -1;
		*(const char **)op->dst = val;
		return 0;
	case OPT_CUSTOM:
		return op->parse(val, op->dst) < 0 ? -1 : 0;
	}
	return -1;
}

static inline void opt_set(const struct opt *op, char *val)
{
	if (opt_store(op, val) < 0)
		bad_arg(op, val);
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

/* The index in opts of what getopt_long() returned (256 + it, or a letter); -1: none */
static inline int opt_index(const struct opt *opts, size_t n, int c)
{
	if (c >= 256)
		return c - 256;
	for (size_t i = 0; i < n; i++)
		if (opts[i].letter == c)
			return (int)i;
	return -1;
}

/*
 * Parse the options of argv by the table opts: first the defaults (.def),
 * then argv's values, checked and stored as they come (a later one wins);
 * --help and -h call usage(stdout, 0).  Returns the index in argv of the
 * first operand (getopt_long() moves the operands after the options,
 * unless OPTS_IN_ORDER).  argv[0] is the program's (or command's) name.
 */
static inline int parse_opts(int argc, char **argv, const struct opt *opts, unsigned int flags)
{
	size_t n = 0, nl = 0;
	int c, k, li;

	for (; opts[n].name || opts[n].letter; n++)
		if (opts[n].def)
			opt_default(&opts[n]);

	struct option lo[n + 2];
	char so[2 * n + 3], *s = so;	/* "+h", then each letter and its ':' */

	if (flags & OPTS_IN_ORDER)
		*s++ = '+';
	*s++ = 'h';
	for (size_t i = 0; i < n; i++) {
		int arg = opts[i].type == OPT_FLAG ? no_argument : required_argument;

		if (opts[i].name)
			lo[nl++] = (struct option){ opts[i].name, arg, NULL, 256 + (int)i };
		if (opts[i].letter) {
			*s++ = (char)opts[i].letter;
			if (arg == required_argument)
				*s++ = ':';
		}
	}
	*s = '\0';
	lo[nl] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[nl + 1] = (struct option){ NULL, 0, NULL, 0 };

	opterr = 0;
	optind = 0;	/* a fresh scan: a command's after its program's */
	while ((c = getopt_long(argc, argv, so, lo, &li)) != -1) {
		if (c == 'h')
			usage(stdout, 0);
		k = c == '?' ? -1 : opt_index(opts, n, c);
		if (k >= 0) {
			opt_set(&opts[k], optarg);
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
