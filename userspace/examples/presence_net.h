/* SPDX-License-Identifier: MIT */
/*
 * presence's network path (--udp, --xdp): heartbeats as real clients send
 * them, one UDP/IPv4 datagram per heartbeat whose payload is the user id
 * (a big-endian u64, bit 63 for activity: presence_xdp.h).  The client
 * process sends them from another network namespace (--client-netns, the
 * far end of a veth pair) with sendmmsg(); the service receives them with
 * recvmmsg().  With --xdp IFACE the XDP program of presence_xdp.bpf.c, on
 * the service's end of the link, touches the wheels of the users they
 * have through the module's kfunc and drops their heartbeats: only what
 * the wheels do not know (logins, users back from offline or away)
 * reaches the socket.
 *
 * Part of presence.c's translation unit (static functions, after
 * common.h), like common.h itself.
 */
#ifndef PRESENCE_NET_H
#define PRESENCE_NET_H

#include <arpa/inet.h>
#include <endian.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/sock_diag.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "presence_xdp.h"
#include "presence_xdp.skel.h"

#define NET_VLEN	1024		/* datagrams per recvmmsg() */
#define NET_SEND_VLEN	64		/* datagrams per sendmmsg(), then a yield */

/* The service's end: its socket's buffers and, with --xdp, the program. */
struct net_path {
	struct presence_xdp *skel;
	int ifindex;
	const char *xdp_mode;		/* "native" or "generic" */
	const struct presence_stamp *stamps;	/* the map, per user */
	size_t stamps_len;
	uint64_t truncated;		/* datagrams that were not one id */
	struct mmsghdr msg[NET_VLEN];
	struct iovec iov[NET_VLEN];
	uint64_t buf[NET_VLEN];
};

/* What became of the heartbeats at the XDP program (its counters). */
struct net_counts {
	uint64_t dropped;	/* touched in the kernel, dropped */
	uint64_t absent;	/* not on the offline wheel: passed up */
	uint64_t away_absent;	/* activity not on the away wheel: passed up */
	uint64_t errors;	/* another error from the kfunc: passed up */
	uint64_t other;		/* not a heartbeat: passed up */
};

/*
 * Datagrams the network dropped on their way to the service, so that a
 * login lost on a loaded machine is told from a lost arm or touch: the
 * drops of the service's socket (its receive buffer was full,
 * SK_MEMINFO_DROPS), and the "drop" columns (receive and transmit) of
 * @dev, /proc/PID/net/dev: those of the devices in PID's network
 * namespace.  A veth counts there what it could not hand to its peer (the
 * peer's XDP ring full).
 */
static inline uint64_t net_sock_drops(int s)
{
	uint32_t mi[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mi);

	if (getsockopt(s, SOL_SOCKET, SO_MEMINFO, mi, &len) < 0 ||
	    len < (SK_MEMINFO_DROPS + 1) * sizeof(mi[0]))
		die("%s: SO_MEMINFO: %s", prog, strerror(errno));
	return mi[SK_MEMINFO_DROPS];
}

static inline uint64_t net_dev_drops(const char *dev)
{
	unsigned long long rx, tx;
	uint64_t sum = 0;
	char line[512];
	FILE *f = fopen(dev, "re");

	if (!f)
		die("%s: %s: %s", prog, dev, strerror(errno));
	/* "name: rx bytes packets errs DROP fifo frame compressed multicast, tx bytes packets errs DROP" */
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (p && sscanf(p + 1, "%*u %*u %*u %llu %*u %*u %*u %*u %*u %*u %*u %llu",
				&rx, &tx) == 2)
			sum += rx + tx;
	}
	fclose(f);
	return sum;
}

/* "A.B.C.D" and a port; -1 if not an IPv4 address. */
static inline int net_addr(const char *s, uint64_t port, struct sockaddr_in *a)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, s, &a->sin_addr) == 1 ? 0 : -1;
}

/* SO_{SND,RCV}BUFFORCE as root, else as much as the limits allow. */
static inline void net_bufsize(int s, int opt, int force, int size)
{
	if (setsockopt(s, SOL_SOCKET, force, &size, sizeof(size)) < 0)
		setsockopt(s, SOL_SOCKET, opt, &size, sizeof(size));
}

/* The service's socket, non-blocking, bound to @a, with @rcvbuf bytes. */
static inline int net_server(const struct sockaddr_in *a, int rcvbuf)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (s < 0)
		die("%s: socket: %s", prog, strerror(errno));
	net_bufsize(s, SO_RCVBUF, SO_RCVBUFFORCE, rcvbuf);
	if (bind(s, (const struct sockaddr *)a, sizeof(*a)) < 0)
		die("%s: bind %s:%u: %s", prog, inet_ntoa(a->sin_addr), ntohs(a->sin_port),
		    strerror(errno));
	return s;
}

/*
 * --client-raw IFACE: the clients build each heartbeat's Ethernet, IPv4 and
 * UDP headers themselves and hand the frames to IFACE with an AF_PACKET
 * socket, past the sending host's IP and UDP layers and its qdisc: a
 * cheaper load generator, so that the machine's CPU per heartbeat is more
 * the receiving side's.  The frames go to the broadcast MAC (the receiver
 * accepts a unicast IPv4 destination in an L2 broadcast), the UDP
 * checksum is 0 (none, as IPv4 allows).
 */
struct net_frame {
	struct ethhdr eth;
	struct iphdr ip;
	struct udphdr udp;
	uint64_t id;		/* big-endian */
} __attribute__((packed));

static struct net_frame net_tmpl;	/* the client's, but for id and checksum */

static inline uint16_t net_csum(const void *p, size_t len)
{
	const uint16_t *w = p;
	uint32_t sum = 0;

	for (; len > 1; len -= 2)
		sum += *w++;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* An AF_PACKET socket on @ifname, and the frame template for @a. */
static inline int net_client_raw(const char *ifname, const struct sockaddr_in *a)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP) };
	struct ifreq ifr;
	int s, one = 1;

	s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (s < 0)
		die("%s: AF_PACKET socket: %s", prog, strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!ll.sll_ifindex || ioctl(s, SIOCGIFADDR, &ifr) < 0 ||
	    bind(s, (struct sockaddr *)&ll, sizeof(ll)) < 0)
		die("%s: --client-raw %s: %s", prog, ifname, strerror(errno));
	setsockopt(s, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	net_bufsize(s, SO_SNDBUF, SO_SNDBUFFORCE, 4 << 20);
	memset(net_tmpl.eth.h_dest, 0xff, ETH_ALEN);
	net_tmpl.eth.h_proto = htons(ETH_P_IP);
	net_tmpl.ip.version = 4;
	net_tmpl.ip.ihl = 5;
	net_tmpl.ip.tot_len = htons(sizeof(net_tmpl) - sizeof(net_tmpl.eth));
	net_tmpl.ip.ttl = 64;
	net_tmpl.ip.protocol = IPPROTO_UDP;
	net_tmpl.ip.saddr = ((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr.s_addr;
	net_tmpl.ip.daddr = a->sin_addr.s_addr;
	net_tmpl.ip.check = net_csum(&net_tmpl.ip, sizeof(net_tmpl.ip));
	net_tmpl.udp.source = htons(40000);
	net_tmpl.udp.dest = a->sin_port;
	net_tmpl.udp.len = htons(sizeof(net_tmpl.udp) + sizeof(net_tmpl.id));
	return s;
}

/* The clients' socket: in the network namespace at @netns (if set). */
static inline int net_client(const char *netns, const char *raw, const struct sockaddr_in *a)
{
	int s, ns;

	if (netns) {
		ns = open(netns, O_RDONLY | O_CLOEXEC);
		if (ns < 0 || setns(ns, CLONE_NEWNET) < 0)
			die("%s: network namespace %s: %s", prog, netns, strerror(errno));
		close(ns);
	}
	if (raw)
		return net_client_raw(raw, a);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		die("%s: socket: %s", prog, strerror(errno));
	net_bufsize(s, SO_SNDBUF, SO_SNDBUFFORCE, 4 << 20);
	if (connect(s, (const struct sockaddr *)a, sizeof(*a)) < 0)
		die("%s: connect %s:%u: %s", prog, inet_ntoa(a->sin_addr), ntohs(a->sin_port),
		    strerror(errno));
	return s;
}

/*
 * One datagram per id, NET_SEND_VLEN to a sendmmsg(): 0, or -1 once the
 * service is gone.  A refused datagram (an ICMP error of an earlier one,
 * before the service bound its socket) is sent again.  The CPU is yielded
 * between vectors: the receive side of a veth pair runs in softirq on the
 * sender's CPU, and once the kernel hands that to ksoftirqd, a sender
 * that does not let it run overflows the receiving queue (256 packets for
 * XDP) and its datagrams are dropped, which many real clients, each on its
 * own machine, would not do.
 */
static inline int net_send(int s, const uint64_t *ids, size_t n)
{
	struct mmsghdr msg[NET_SEND_VLEN];
	struct iovec iov[NET_SEND_VLEN];
	struct net_frame fr[NET_SEND_VLEN];
	uint64_t be[NET_SEND_VLEN];
	int raw = net_tmpl.ip.version != 0;
	size_t i, k;
	int r;

	memset(msg, 0, sizeof(msg));
	for (i = 0; i < n; i += (size_t)r) {
		if (i)
			sched_yield();
		k = n - i < NET_SEND_VLEN ? n - i : NET_SEND_VLEN;
		for (size_t j = 0; j < k; j++) {
			be[j] = htobe64(ids[i + j]);
			iov[j] = (struct iovec){ &be[j], sizeof(be[j]) };
			if (raw) {
				fr[j] = net_tmpl;
				fr[j].id = be[j];
				iov[j] = (struct iovec){ &fr[j], sizeof(fr[j]) };
			}
			msg[j].msg_hdr.msg_iov = &iov[j];
			msg[j].msg_hdr.msg_iovlen = 1;
		}
		r = sendmmsg(s, msg, (unsigned int)k, 0);
		if (r < 0 && (errno == EINTR || errno == ECONNREFUSED || errno == ENOBUFS))
			r = 0;
		else if (r < 0)
			return -1;
	}
	return 0;
}

/* Set up recvmmsg()'s vector over np->buf. */
static inline void net_init(struct net_path *np)
{
	memset(np, 0, sizeof(*np));
	for (size_t i = 0; i < NET_VLEN; i++) {
		np->iov[i] = (struct iovec){ &np->buf[i], sizeof(np->buf[i]) };
		np->msg[i].msg_hdr.msg_iov = &np->iov[i];
		np->msg[i].msg_hdr.msg_iovlen = 1;
	}
}

/*
 * Up to @max (at most NET_VLEN) heartbeats into @ids: how many, 0 if none
 * is queued; dies on a socket error.  A datagram that is not one id is
 * counted and skipped.
 */
static inline size_t net_recv(struct net_path *np, int s, uint64_t *ids, size_t max)
{
	int r = recvmmsg(s, np->msg, (unsigned int)(max < NET_VLEN ? max : NET_VLEN),
			 MSG_DONTWAIT, NULL);
	size_t n = 0;

	if (r < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		die("%s: recvmmsg: %s", prog, strerror(errno));
	}
	for (int i = 0; i < r; i++) {
		if (np->msg[i].msg_len == sizeof(uint64_t) &&
		    !(np->msg[i].msg_hdr.msg_flags & MSG_TRUNC))
			ids[n++] = be64toh(np->buf[i]);
		else
			np->truncated++;
		np->msg[i].msg_hdr.msg_flags = 0;
	}
	return n;
}

/* -------------------------------------------------------------- XDP */

/* The wheel's BPF handle (TWHEEL_IOC_BPF_HANDLE); dies without one. */
static inline uint64_t net_handle(int fd)
{
	uint64_t h = 0;

	if (ioctl(fd, TWHEEL_IOC_BPF_HANDLE, &h) < 0)
		die("%s: TWHEEL_IOC_BPF_HANDLE: %s%s", prog, strerror(errno),
		    errno == EOPNOTSUPP ? " (the module was built without BTF: make BTF=1)" : "");
	return h;
}

/* Attach to @ifindex natively, else in generic (skb) mode. */
static inline void net_xdp_link(struct net_path *np)
{
	int fd = bpf_program__fd(np->skel->progs.presence_xdp), err;

	np->xdp_mode = "native";
	err = bpf_xdp_attach(np->ifindex, fd, XDP_FLAGS_DRV_MODE, NULL);
	if (err) {
		np->xdp_mode = "generic";
		err = bpf_xdp_attach(np->ifindex, fd, XDP_FLAGS_SKB_MODE, NULL);
	}
	if (err)
		die("%s: attaching XDP: %s", prog, strerror(-err));
}

/* The program's stamps, mapped read-only: one per user. */
static inline void net_map_stamps(struct net_path *np, uint64_t users)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *p;

	np->stamps_len = (users * sizeof(*np->stamps) + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	p = mmap(NULL, np->stamps_len, PROT_READ, MAP_SHARED,
		 bpf_map__fd(np->skel->maps.stamps), 0);
	if (p == MAP_FAILED)
		die("%s: mmap of the stamps: %s", prog, strerror(errno));
	np->stamps = p;
}

/*
 * Load the XDP program for the wheels @off_fd and @away_fd, the port and
 * @users users, and attach it to @ifname; with @sink, one that drops every
 * heartbeat untouched.
 */
static inline void net_xdp_attach(struct net_path *np, const char *ifname, int off_fd,
				  int away_fd, uint16_t port, uint64_t users, int sink)
{
	np->ifindex = (int)if_nametoindex(ifname);
	if (!np->ifindex)
		die("%s: no interface %s", prog, ifname);
	np->skel = presence_xdp__open();
	if (!np->skel)
		die("%s: opening the XDP program: %s", prog, strerror(errno));
	np->skel->rodata->off_handle = net_handle(off_fd);
	np->skel->rodata->away_handle = net_handle(away_fd);
	np->skel->rodata->users = users;
	np->skel->rodata->port = htons(port);
	np->skel->rodata->sink = !!sink;
	if (bpf_map__set_max_entries(np->skel->maps.stamps, (uint32_t)users) ||
	    presence_xdp__load(np->skel))
		die("%s: loading the XDP program failed (is the module's BTF loaded?)", prog);
	net_map_stamps(np, users);
	net_xdp_link(np);
}

static inline void net_xdp_detach(struct net_path *np)
{
	if (!np->skel)
		return;
	bpf_xdp_detach(np->ifindex, 0, NULL);
	munmap((void *)np->stamps, np->stamps_len);
	presence_xdp__destroy(np->skel);
	np->skel = NULL;
}

/* The program's counters (all zero without --xdp). */
static inline void net_xdp_counts(const struct net_path *np, struct net_counts *c)
{
	memset(c, 0, sizeof(*c));
	if (!np->skel)
		return;
	c->dropped = np->skel->bss->dropped;
	c->absent = np->skel->bss->absent;
	c->away_absent = np->skel->bss->away_absent;
	c->errors = np->skel->bss->errors;
	c->other = np->skel->bss->other;
}

/* When the program last touched user @u: on the offline wheel, or away. */
static inline uint64_t net_stamp(const struct net_path *np, uint64_t u, int away)
{
	if (!np->skel)
		return 0;
	return away ? np->stamps[u].away : np->stamps[u].off;
}

#endif /* PRESENCE_NET_H */
